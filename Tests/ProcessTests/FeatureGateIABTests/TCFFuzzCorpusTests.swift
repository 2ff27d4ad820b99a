#if os(macOS) || os(Linux)
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// The IAB fuzz target's invariants hold on its committed seed corpus in a plain build, so a broken seed or
/// harness shows up in `swift test`, not only when someone fuzzes.
@Suite struct TCFFuzzCorpusTests {
    @Test func theSeedCorpusReplaysThroughTheFuzzTargetCleanly() throws {
        let corpus = packageRoot.appending(path: "Tests/Fuzz/TCFFuzzer/Corpus")
        let seeds = try FileManager.default.contentsOfDirectory(atPath: corpus.path(percentEncoded: false))
        #expect(seeds.count >= 25)
        let run = try runBuiltExecutable("tcf-fuzzer", [corpus.path(percentEncoded: false)], in: packageRoot)
        #expect(run.status == 0)
        #expect(run.lines == ["tcf-fuzzer: replayed \(seeds.count) inputs; every invariant held"])
    }

    @Test func aMissingInputIsAnError() throws {
        let run = try runBuiltExecutable("tcf-fuzzer", ["/no/such/input"], in: packageRoot)
        #expect(run.status == 2)
        #expect(run.errorOutput == "tcf-fuzzer: no such file: /no/such/input\n")
    }
}
#endif

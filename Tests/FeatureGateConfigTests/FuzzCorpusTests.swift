import Foundation
import Testing

/// The fuzz target's invariants hold on the committed seed corpus in a plain build, so a broken seed or harness
/// shows up in `swift test`, not only when someone fuzzes.
@Suite struct FuzzCorpusTests {
    @Test func theSeedCorpusReplaysThroughTheFuzzTargetCleanly() throws {
        let corpus = packageRoot.appending(path: "Tests/Fuzz/ConfigFuzzer/Corpus")
        let seeds = try FileManager.default.contentsOfDirectory(atPath: corpus.path(percentEncoded: false))
        #expect(seeds.count >= 20)
        let run = try runBuiltExecutable("config-fuzzer", [corpus.path(percentEncoded: false)], in: packageRoot)
        #expect(run.status == 0)
        #expect(run.lines == ["config-fuzzer: replayed \(seeds.count) inputs; every invariant held"])
    }

    @Test func aMissingInputIsAnError() throws {
        let run = try runBuiltExecutable("config-fuzzer", ["/no/such/input"], in: packageRoot)
        #expect(run.status == 2)
        #expect(run.errorLines == ["config-fuzzer: no such file: /no/such/input"])
    }
}

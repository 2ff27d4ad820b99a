#if os(macOS) || os(Linux)
import FeatureGate
import FeatureGateRemote
import Foundation
import PackageTestSupport
import ProcessTestSupport
import RemoteFuzzing
import Testing

/// The remote-data fuzz target in a plain build, and the generator it mutates: it must reach valid and invalid
/// payloads, every flag, and applying and non-applying rules, or the fuzzer is blind.
@Suite struct RemoteFuzzingTests {
    static let ios = RemoteConfigTarget(platform: .ios, sdkVersion: "17.2.0", appVersion: "1.0.3")

    @Test func theFuzzTargetReplaysItsCorpus() throws {
        let corpus = packageRoot.appending(path: "Tests/Fuzz/RemoteFuzzer/Corpus").path(percentEncoded: false)
        let run = try runBuiltExecutable("remote-fuzzer", [corpus], in: packageRoot)
        #expect(run.status == 0)
        #expect(run.lines.last?.hasSuffix("every invariant held") == true)
    }

    @Test func theGeneratorReachesEveryKindOfPayload() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        var valid = 0
        var invalid = 0
        var disabled: Feature = []
        var rulesApplying = 0
        var rulesNotApplying = 0
        // 800 documents reach valid and invalid payloads and every flag; a rule that applies and one that does not
        // are rarer, so the walk goes on (parsing only) until it has seen both, up to 8,000 documents.
        for index in 0..<8_000 {
            if index >= 800 && rulesApplying > 0 && rulesNotApplying > 0 { break }
            let recipe = (0..<Int.random(in: 1...120, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            let document = Data(RemotePayloadGenerator.document(from: recipe))
            if index < 800 && index.isMultiple(of: 8) { RemoteFuzz.run(document) }
            if let decision = try? RemoteConfigParser.parse(document, for: Self.ios) {
                valid += 1
                disabled.formUnion(decision.disables.features)
                rulesApplying += decision.rules.filter(\.applies).count
                rulesNotApplying += decision.rules.filter { !$0.applies }.count
            } else {
                invalid += 1
            }
        }
        #expect(valid > 40, "seed \(seed): \(valid) valid")
        #expect(invalid > 40, "seed \(seed): \(invalid) invalid")
        #expect(disabled == .all, "seed \(seed)")
        #expect(rulesApplying > 0 && rulesNotApplying > 0, "seed \(seed)")
    }
}
#endif

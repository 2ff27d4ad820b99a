#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// Two writer processes burst denials, grants and toggles while this process watches: after every burst, once they
/// stopped, the watching process reaches the store's state (what a fresh start reads) in every round, whatever the
/// interleaving. A failure prints its seed: `FEATUREGATE_SEED=N` replays it.
@Suite struct ConvergenceStressTests {
    /// What a fresh start on `data` reads: analytics' status, and analytics and push in the gate.
    static func freshStart(_ data: PrivacyDataDirectory) async -> (ConsentStatus, Bool, Bool) {
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
            consentPolicy: policy)
        let consent = ConsentManager(privacy: privacy, ledger: FileConsentLedger(url: data.consentLedgerFile))
        return (await consent.status(for: .analytics), privacy.isEnabled(.analytics), privacy.isEnabled(.push))
    }

    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])

    @Test func aWatchingProcessReachesTheStoredStateAfterEveryBurstOfTwoWriters() async throws {
        let seed = MultiProcessTests.seed()
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        try FileManager.default.createDirectory(at: data.url, withIntermediateDirectories: true)
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
            consentPolicy: Self.policy)
        let consent = ConsentManager(privacy: privacy, ledger: FileConsentLedger(url: data.consentLedgerFile))
        let watch = try privacy.watchForChangesFromOtherProcesses(in: data) {
            Task { await consent.catchUpWithLedger() }
        }
        defer { watch.cancel() }

        let rounds = 60
        var stuck: [String] = []
        for round in 0..<rounds {
            let writers = try (0..<2).map { writer in
                try startFeatureStoreWriter([
                    "burst", data.url.path(percentEncoded: false), String(seed &+ UInt64(round * 2 + writer)), "20",
                ])
            }
            for writer in writers {
                writer.waitUntilExit()
                #expect(writer.terminationStatus == 0, "seed \(seed), round \(round)")
            }
            let fresh = await Self.freshStart(data)
            var watched: (ConsentStatus, Bool, Bool) = (.unknown, false, false)
            // Bounded wait (no duration asserted): a process that never gets there is stuck.
            for _ in 0..<1_500 {
                watched = (
                    await consent.status(for: .analytics), privacy.isEnabled(.analytics), privacy.isEnabled(.push)
                )
                if watched == fresh { break }
                try await Task.sleep(for: .milliseconds(2))
            }
            if watched != fresh { stuck.append("round \(round): watched \(watched), a fresh start \(fresh)") }
        }
        #expect(stuck.isEmpty, "seed \(seed): \(stuck.count) of \(rounds) rounds stuck: \(stuck)")
    }
}
#endif

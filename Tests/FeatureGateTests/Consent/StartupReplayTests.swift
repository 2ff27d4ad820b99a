import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// A start replays the consent ledger's records after the point the gate state records (a change a killed process
/// committed in the ledger only). The start reads the state and the ledger without the lock; the replay must not
/// put back what another process changed since.
@Suite struct StartupReplayTests {
    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])

    /// Another process's grant lands between the start's read of the gate state and its read of the ledger (so the
    /// tail it replays holds the grant), and that process's denial lands before the replay. Replayed from what the
    /// start read, the older grant undid the newer denial in the gate state (seen in CI: a settled refusal lost from
    /// the gate state while the ledger ends with it). The start is stopped at its first lock, the replay's, so the
    /// order is fixed.
    @Test func aReplayKeepsANewerChangeSavedSinceTheStartReadTheLedger() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let (_, other) = launchGateAndConsent(on: data, policy: Self.policy)
        try await other.setStatus(.denied, for: .analytics, source: .user)
        // The start reads the gate state now: analytics refused, the point at the end of the denial.
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
            consentPolicy: Self.policy)
        try await other.setStatus(.granted, for: .analytics, source: .user)
        let pause = Pause()
        let started = LockedValue<ConsentManager?>(nil)
        let done = DispatchSemaphore(value: 0)
        let diagnostics = Collector<ConsentDiagnostic>()
        Thread.detachNewThread {
            let consent = FileSystem.$current.withValue(FileSystem.system(stoppingAtFlock: pause)) {
                ConsentManager(
                    privacy: privacy, ledger: FileConsentLedger(url: data.consentLedgerFile),
                    diagnosticHandler: { diagnostics.append($0) })
            }
            started.withLock { $0 = consent }
            done.signal()
        }
        pause.waitUntilReached()
        try await other.setStatus(.denied, for: .analytics, source: .user)
        pause.release()
        done.wait()
        let stored = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
        #expect(stored.deniedConsentCategories == [.analytics], "the replayed grant undid the later denial")
        #expect(!stored.enabledFeatures.contains(.analytics))
        #expect(!diagnostics.all.contains { if case .gateStateBehindLedger = $0 { true } else { false } })
        let (fresh, freshConsent) = launchGateAndConsent(on: data, policy: Self.policy)
        #expect(await freshConsent.status(for: .analytics) == .denied)
        #expect(!fresh.isEnabled(.analytics))
        #expect(started.withLock { $0 } != nil)
    }

    /// The replay still completes what a killed process committed when it started while another process kept the
    /// lock: once the lock is free, the gate state takes the tail, and reports it.
    @Test func aReplayBehindABusyLockLandsOnceTheLockIsFree() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let (_, first) = launchGateAndConsent(on: data, policy: Self.policy)
        try await first.setStatus(.granted, for: .analytics, source: .user)
        // A process killed right after its denial's record: the ledger has it, the gate state does not.
        try FileConsentLedger(url: data.consentLedgerFile).append(
            ConsentRecord(
                category: .analytics, previousStatus: .granted, newStatus: .denied, time: Date(), policyVersion: 1,
                source: .user))
        let release = IntentFolderTests.holdLock(of: data)
        let diagnostics = Collector<ConsentDiagnostic>()
        let (privacy, consent) = launchGateAndConsent(on: data, policy: Self.policy) { diagnostics.append($0) }
        // Refused at once, from the ledger, while the gate state still says granted.
        #expect(await consent.status(for: .analytics) == .denied)
        #expect(!privacy.isEnabled(.analytics))
        let waiting = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
        #expect(waiting.deniedConsentCategories.isEmpty)
        release()
        func isReported() -> Bool {
            diagnostics.all.contains { if case .gateStateBehindLedger(_, 1) = $0 { true } else { false } }
        }
        // The report follows the replay's write, once the lock is let go: both are waited for.
        let replayed = await eventually(turns: 2_000) {
            guard let stored = try? FileFeatureStore(url: data.stateFile).load() else { return false }
            return (try? FeatureStateRecord(decoding: stored))?.deniedConsentCategories == [.analytics] && isReported()
        }
        #expect(replayed, "the tail was not replayed once the lock was free")
        #expect(isReported())
        #expect(!privacy.isEnabled(.analytics))
    }
}

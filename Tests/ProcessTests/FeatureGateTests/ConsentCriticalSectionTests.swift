#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// One consent change is one critical section: its ledger record and the gate state it decides are written under one
/// hold of the data directory's lock, so another process's change never lands in between (issue 28's recipe).
@Suite struct ConsentCriticalSectionTests {
    /// A file ledger that, right after its first append once armed, runs `interleave`: another process's change at
    /// the worst moment.
    final class InterleavingLedger: ConsentLedger {
        let inner: FileConsentLedger
        let armed = LockedValue(false)
        let interleave: @Sendable () -> Void

        init(inner: FileConsentLedger, interleave: @escaping @Sendable () -> Void) {
            self.inner = inner
            self.interleave = interleave
        }

        func load() throws -> ConsentLedgerContents { try inner.load() }
        func append(_ record: ConsentRecord) throws {
            try inner.append(record)
            if armed.withLock({ armed in
                defer { armed = false }; return armed
            }) {
                interleave()
            }
        }
        func exportJSONLines() throws -> Data { try inner.exportJSONLines() }
    }

    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])

    @Test func anotherProcessGrantingRightAfterADenialsRecordEndsAsTheLedgerSays() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
            consentPolicy: Self.policy)
        let child = LockedValue<Process?>(nil)
        let ledger = InterleavingLedger(inner: FileConsentLedger(url: data.consentLedgerFile)) {
            // The other process grants analytics; it is given up to 2 s (it cannot finish while this change holds
            // the lock, and must not be waited for then).
            guard
                let process = try? startFeatureStoreWriter(["consent", data.url.path(percentEncoded: false), "granted"])
            else {
                return
            }
            child.withLock { $0 = process }
            let deadline = Date().addingTimeInterval(2)
            while process.isRunning && Date() < deadline { usleep(2_000) }
        }
        let consent = ConsentManager(privacy: privacy, ledger: ledger)
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        ledger.armed.withLock { $0 = true }

        try await consent.setStatus(.denied, for: .analytics, source: .user)
        let process = try #require(child.withLock { $0 })
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)

        // The other process's grant came last: the ledger ends with it.
        let records = try FileConsentLedger(url: data.consentLedgerFile).load().records
        #expect(records.map(\.newStatus) == [.granted, .denied, .granted])
        // A fresh start equals the full fold, and its gate agrees with the statuses.
        let freshPrivacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
            consentPolicy: Self.policy)
        let fresh = ConsentManager(privacy: freshPrivacy, ledger: FileConsentLedger(url: data.consentLedgerFile))
        #expect(await fresh.status(for: .analytics) == .granted)
        #expect(freshPrivacy.isEnabled(.analytics))
        #expect(fresh.startupDiagnostics.isEmpty, "\(fresh.startupDiagnostics)")
        // And this process, once it caught up, ends where one process doing the same in the same order would.
        privacy.reloadStoredState()
        await consent.catchUpWithLedger()
        #expect(await consent.status(for: .analytics) == .granted)
        #expect(privacy.isEnabled(.analytics))
    }

}
#endif

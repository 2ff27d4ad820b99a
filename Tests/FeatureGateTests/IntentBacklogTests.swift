import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// A backlog of intents (a holder stopped while another process kept toggling) folds in one pass: one ledger append
/// and one gate-state write for all of them, a flush count that does not grow with the backlog; and a start opens
/// each intent once, though its gate, its consent manager and its remote layer all read them.
@Suite struct IntentBacklogTests {
    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])

    /// A directory where analytics is granted and push enabled, with `count` denials pending as intents behind them.
    static func prepared(_ directory: TemporaryDirectory, backlog count: Int) async throws -> PrivacyDataDirectory {
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let (privacy, consent) = launchGateAndConsent(on: data, policy: Self.policy)
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        privacy.enableFeatures(.push)
        for index in 0..<count {
            let record = ConsentRecord(
                category: .analytics, previousStatus: .granted, newStatus: .denied,
                time: Date(timeIntervalSince1970: 1_000_000 + Double(index)), policyVersion: 1, source: .user)
            try IntentJournal.record(
                TakeAwayIntent(
                    stateFile: PrivacyDataDirectory.stateFileName,
                    ledgerFile: PrivacyDataDirectory.consentLedgerFileName, disable: .push, refuse: [.analytics],
                    records: [record]),
                in: data.url.path(percentEncoded: false))
        }
        return data
    }

    @Test func aBacklogFoldsInOnePassAndEveryRecordLandsOnce() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = try await Self.prepared(directory, backlog: 200)

        let disk = FlushCountingFileSystem()
        FileSystem.$current.withValue(disk.fileSystem) {
            _ = AtomicFile.withLock(of: data.stateFile, waitingAtMost: nil) {}
        }
        let flushes = disk.flushes
        #expect(flushes <= 12, "\(flushes) flushes to fold 200 intents")
        let records = try FileConsentLedger(url: data.consentLedgerFile).load().records
        #expect(records.filter { $0.newStatus == .denied }.count == 200)
        let stored = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
        #expect(!stored.enabledFeatures.contains(.push) && stored.deniedConsentCategories == [.analytics])
        #expect(IntentJournal.pending(in: data.url.path(percentEncoded: false)).isEmpty)
    }

    @Test func aStartOpensEachIntentOnce() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = try await Self.prepared(directory, backlog: 20)

        let disk = FlushCountingFileSystem()
        let status = await FileSystem.$current.withValue(disk.fileSystem) {
            let fresh = launchGateAndConsent(on: data, policy: Self.policy)
            return await fresh.consent.status(for: .analytics)
        }
        #expect(status == .denied)
        let opens = disk.intentOpens.withLock { $0 }
        #expect(opens.count == 20 && opens.values.allSatisfy { $0 == 1 }, "\(opens.values.sorted())")
    }
}

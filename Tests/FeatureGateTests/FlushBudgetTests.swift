import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// Flushes per operation, counted through the file layer's seam (``FlushCountingFileSystem``), what the call made
/// and what it left to another thread alike: the checkpoint (a cache) is never flushed, a consent change's gate state
/// is committed by its ledger line, a take-away behind a busy lock costs one intent and its folder. The benchmark package measures
/// the same operations on the device (`Device.*`, budgets in `Benchmarks/report.py`).
@Suite struct FlushBudgetTests {
    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])

    /// A data directory where messageCenter is enabled and analytics has `status`, all of it written.
    static func prepared(
        _ directory: TemporaryDirectory, analytics status: ConsentStatus = .granted
    ) async throws -> (PrivacyDataDirectory, PrivacyManager, ConsentManager) {
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let (privacy, consent) = launchGateAndConsent(on: data, policy: Self.policy)
        try await consent.setStatus(status, for: .analytics, source: .user)
        privacy.enableFeatures(.messageCenter)
        await consent.waitForLedgerVerification()
        return (data, privacy, consent)
    }

    /// The flushes `operation` makes, the call's own and those it leaves to another thread, and of them directories'.
    static func flushes(_ operation: () async -> Void) async -> (all: Int, directories: Int) {
        let counter = FlushCountingFileSystem()
        await FileSystem.$current.withValue(counter.fileSystem) { await operation() }
        await counter.settle()
        return (counter.flushes, counter.directoryFlushes)
    }

    /// The flushes a synchronous `call` makes on its own thread, and all it leads to once ``PrivacyManager/synchronize()``
    /// returned and the process is quiet, and of them directories'.
    static func flushes(
        of privacy: PrivacyManager, _ call: () -> Void
    ) async -> (all: Int, directories: Int, caller: Int, synchronized: Bool) {
        let counter = FlushCountingFileSystem()
        let synchronized = await FileSystem.$current.withValue(counter.fileSystem) {
            counter.asCaller(call)
            return await privacy.synchronize()
        }
        await counter.settle()
        return (counter.flushes, counter.directoryFlushes, counter.callerFlushes, synchronized)
    }

    @Test func aDisableFlushesAtMostTwice() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let (_, privacy, _) = try await Self.prepared(directory)
        let counted = await Self.flushes { privacy.disableFeatures(.messageCenter) }
        #expect(!privacy.isEnabled(.messageCenter))
        #expect(counted.all <= 2, "\(counted)")
    }

    /// Issue 47, item 1: the disable's commit on the caller's thread is a write (an unflushed intent); its flushes,
    /// at most two, are the flusher's, done by the time ``PrivacyManager/synchronize()`` returns, and the gate state
    /// then holds the "no" (a start reads it without any intent).
    @Test func aDisableMakesNoFlushOnTheCallersThread() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let (data, privacy, _) = try await Self.prepared(directory)
        let counted = await Self.flushes(of: privacy) { privacy.disableFeatures(.messageCenter) }
        #expect(!privacy.isEnabled(.messageCenter))
        #expect(counted.caller == 0 && counted.all >= 1 && counted.all <= 2 && counted.synchronized, "\(counted)")
        let stored = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
        #expect(!stored.enabledFeatures.contains(.messageCenter) && stored.decidedFeatures.contains(.messageCenter))
        #expect(stored.purgeOwedFeatures.contains(.messageCenter), "\(stored)")
        #expect(IntentJournal.pending(in: data.url.path(percentEncoded: false)).isEmpty)
    }

    /// Group commit: every flag of a catalog (23) disabled in a burst, one call each, makes no flush on the caller's
    /// thread, and the disables made while a pass waits for the lock share its flushes: two in all (one flush per
    /// disable, two with its directory's, before). The burst is made while the test holds the lock, so that no pass
    /// can run between two disables: how many passes a burst takes with the lock free depends on the machine's load
    /// (2 here when idle, 14 once under load), and then it is only bounded (at most one pass per disable).
    @Test(arguments: [false, true])
    func aBurstOfDisablesSharesItsFlushes(lockHeld: Bool) async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let catalog = try (16..<32).reduce(FeatureCatalog.builtIn) { catalog, bit in
            try catalog.registering("sdk\(bit)", as: Feature(rawValue: 1 << bit))
        }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: catalog.allFeatures),
            store: FileFeatureStore(url: data.stateFile), catalog: catalog)
        privacy.disableFeatures(.push)
        #expect(await privacy.synchronize())
        let flags = (0..<UInt.bitWidth).map { Feature(rawValue: 1 << $0) }.filter {
            catalog.allFeatures.subtracting(.push).contains($0)
        }
        let release = lockHeld ? IntentFolderTests.holdLock(of: data) : {}
        let counted = await Self.flushes(of: privacy) {
            for flag in flags { privacy.disableFeatures(flag) }
            release()
        }
        #expect(!privacy.isAnyEnabled())
        #expect(counted.caller == 0 && counted.synchronized, "\(counted)")
        #expect(counted.all <= (lockHeld ? 2 : 2 * flags.count), "\(counted)")
        let stored = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
        #expect(stored.enabledFeatures.isEmpty && stored.decidedFeatures == catalog.allFeatures, "\(stored)")
        print(
            "FlushBudgetTests: \(flags.count) disables in a burst (lock \(lockHeld ? "held" : "free")), \(counted.all) "
                + "flushes, \(counted.caller) on the caller's thread")
    }

    /// A grant gives back, so it is written before its call returns: its ledger line and its gate state's data.
    @Test func aGrantFlushesAtMostTwice() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let (_, privacy, consent) = try await Self.prepared(directory, analytics: .denied)
        let counted = await Self.flushes { _ = try? await consent.setStatus(.granted, for: .analytics, source: .user) }
        #expect(privacy.isEnabled(.analytics))
        #expect(counted.all <= 2 && counted.directories == 0, "\(counted)")
    }

    /// Issue 47, item 1: a denial's call writes an unflushed intent and returns, with no flush and no wait for the
    /// lock (counted while the test holds the lock, so the flusher cannot run before the call returned); the
    /// flusher then appends the record (one flush), writes the gate state (its data), and removes the intent with
    /// one plain flush of the directory: three in all, the gate state and the ledger agreeing.
    @Test func aDenialMakesNoFlushBeforeItReturnsAndThreeInAll() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let (data, privacy, consent) = try await Self.prepared(directory, analytics: .granted)
        let counter = FlushCountingFileSystem()
        let release = IntentFolderTests.holdLock(of: data)
        let (returned, synchronized) = await FileSystem.$current.withValue(counter.fileSystem) {
            () async -> (Int, Bool) in
            _ = try? await consent.setStatus(.denied, for: .analytics, source: .user)
            let returned = counter.flushes
            release()
            return (returned, await privacy.synchronize())
        }
        await counter.settle()
        #expect(!privacy.isEnabled(.analytics))
        #expect(returned == 0 && synchronized, "\(returned) flushes before the call returned")
        #expect(counter.flushes <= 3 && counter.directoryFlushes <= 1, "\(counter.flushes) flushes: \(counter.flushed)")
        let stored = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
        #expect(stored.deniedConsentCategories.contains(.analytics), "\(stored)")
        let records = try FileConsentLedger(url: data.consentLedgerFile).load().records
        #expect(records.last?.newStatus == .denied)
        #expect(stored.ledgerLength == (try Data(contentsOf: data.consentLedgerFile)).count, "\(stored)")
        #expect(IntentJournal.pending(in: data.url.path(percentEncoded: false)).isEmpty)
        print("FlushBudgetTests: a denial, \(returned) flushes before it returned, \(counter.flushes) in all")
    }

    /// Revoke-all's one write of the gate state records the purges it owes, as a disable's save does: memory takes
    /// that write as saved instead of saving again only to add them.
    @Test func revokeAllsOneWriteOwesThePurgesOfWhatItTurnedOff() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let (data, privacy, _) = try await Self.prepared(directory)
        let counted = await Self.flushes {
            _ = privacy.beginRevocation(
                PendingRevocation(anonymousIdentifier: nil, isErasureOwed: false), refusing: [.analytics])
        }
        let stored = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
        #expect(stored.purgeOwedFeatures.isSuperset(of: [.messageCenter, .analytics]), "\(stored)")
        #expect(privacy.owedPurges == stored.purgeOwedFeatures)
        #expect(stored.pendingRevocation != nil && !privacy.isAnyEnabled())
        #expect(counted.all <= 2, "\(counted)")
    }

    /// Behind a busy lock a disable's intent, like any app take-away's since issue 47's item 1, is written unflushed
    /// (none of these flushes while the lock is held); the other take-aways' intents (a refusal, revoke-all's record)
    /// flush: the first creates the intents' folder, whose entry in the data directory is flushed too; later ones,
    /// while it stands, flush their own data and the folder only.
    @Test func aTakeAwayBehindABusyLockFlushesTwiceOnceItsFolderStands() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let (data, privacy, _) = try await Self.prepared(directory)
        privacy.enableFeatures(.push)
        let release = IntentFolderTests.holdLock(of: data)
        // Counted while the lock is held: the intents; the fold, once the lock is free, is the next holder's write.
        let first = await Self.flushes { privacy.disableFeatures(.messageCenter) }
        let second = await Self.flushes { privacy.disableFeatures(.push) }
        release()
        #expect(!privacy.isEnabled(.messageCenter) && !privacy.isEnabled(.push))
        #expect(first.all <= 3 && first.directories <= 2, "first: \(first)")
        #expect(second.all <= 2 && second.directories <= 1, "second: \(second)")
    }
}

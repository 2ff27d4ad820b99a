import FeatureGate
import Foundation
import PackageTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A record that cannot be read is never overwritten: start-up fails closed and changes wait until it can be read.
@Suite struct UnreadableStoreTests {
    /// The user turned push off and analytics on; the configuration has push on.
    private let userRecord = FeatureStateRecord(
        enabledFeatures: .analytics, decidedFeatures: [.push, .analytics], deniedConsentCategories: [.advertising])

    @Test func startUpFailsClosedInsteadOfFallingBackToTheConfiguration() {
        let store = FlakyFeatureStore(record: userRecord.encoded(), unreadable: true)
        let gate = manager([.push, .contacts], store: store)
        #expect(gate.enabledFeatures == [])
        #expect(gate.isHoldingWrites)
        #expect(gate.reason(for: .push).source == .unreadableStoredState)
        guard case .storeUnreadableWritesHeld(let name, _) = gate.startupDiagnostics.first else {
            Issue.record("expected storeUnreadableWritesHeld, got \(gate.startupDiagnostics)")
            return
        }
        #expect(name == "flaky store")
    }

    /// On iOS, a file of data protection class `complete` cannot be opened while the device is locked (`EPERM`);
    /// a file on a failing disk gives `EIO`. Any system error may pass and holds writes; a record that is there but
    /// wrong (a link, a FIFO, too large) does not.
    @Test(arguments: [
        (FileStoreError.Problem.system(EACCES), true), (.system(EPERM), true), (.system(EIO), true),
        (.system(EAGAIN), true), (.symbolicLink, false), (.notRegularFile(found: "a FIFO"), false),
        (.notDirectory(found: "a regular file"), false), (.tooLarge(limit: 1), false),
    ])
    func systemErrorsHoldWritesAndHostileContentReadsAsCorrupt(problem: FileStoreError.Problem, holds: Bool) {
        let store = FlakyFeatureStore(record: userRecord.encoded(), unreadable: true, problem: problem)
        let gate = manager(.push, store: store)
        #expect(gate.isHoldingWrites == holds)
        #expect(gate.enabledFeatures == (holds ? [] : .push))
        gate.enableFeatures(.contacts)
        #expect(store.writes == (holds ? 0 : 1))
    }

    @Test func changesAreHeldUntilTheRecordCanBeReadAndThenMergedIntoIt() {
        let store = FlakyFeatureStore(record: userRecord.encoded(), unreadable: true)
        let diagnostics = Collector<PrivacyManagerDiagnostic>()
        let gate = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: [.push, .contacts]), store: store,
            diagnosticHandler: diagnostics.append)
        gate.enableFeatures(.messageCenter)
        #expect(gate.enabledFeatures == .messageCenter)
        #expect(store.writes == 0)
        #expect(store.record == userRecord)
        #expect(diagnostics.all.filter { if case .storeUnreadableWritesHeld = $0 { true } else { false } }.count == 2)

        // Readable again: the next change merges. The user's push-off and analytics-on come back, the change made
        // meanwhile is kept, undecided contacts follows the configuration again.
        store.unreadable = false
        gate.enableFeatures(.featureFlags)
        #expect(!gate.isHoldingWrites)
        #expect(gate.enabledFeatures == [.analytics, .messageCenter, .featureFlags, .contacts])
        #expect(store.record?.decidedFeatures == [.push, .analytics, .messageCenter, .featureFlags])
        #expect(store.record?.enabledFeatures == [.analytics, .messageCenter, .featureFlags])
        #expect(store.record?.deniedConsentCategories == [.advertising])
        guard case .storeReadableAgain = diagnostics.all.last else {
            Issue.record("expected storeReadableAgain, got \(diagnostics.all)")
            return
        }
    }

    @Test func aChangeWhileHeldWinsOverTheRecordForTheFlagsItDecided() {
        let store = FlakyFeatureStore(record: userRecord.encoded(), unreadable: true)
        let gate = manager(.push, store: store)
        gate.enableFeatures(.push)
        gate.disableFeatures(.analytics)
        store.unreadable = false
        #expect(!gate.retryHeldStore())
        #expect(gate.enabledFeatures == .push)
        // Analytics, decided off by the held change, owes its subsystems' purge.
        var expected = FeatureStateRecord(
            enabledFeatures: .push, decidedFeatures: [.push, .analytics], deniedConsentCategories: [.advertising])
        expected.purgeOwedFeatures = .analytics
        #expect(store.record == expected)
    }

    @Test func retryingWhileStillUnreadableChangesNothing() {
        let store = FlakyFeatureStore(record: userRecord.encoded(), unreadable: true)
        let gate = manager(.push, store: store)
        #expect(gate.retryHeldStore())
        #expect(gate.enabledFeatures == [])
        #expect(store.writes == 0)
    }

    /// Readable again, but written by a newer version: it is left byte for byte, reported, and writes stay held, so
    /// its unread refusals and decisions keep every undecided flag off.
    @Test func aRecordOfANewerFormatFoundOnRetryIsKeptAndWritesStayHeld() {
        let newer = Data(
            #"{"decidedFeatures":4,"deniedConsentCategories":["advertising"],"enabledFeatures":4,"version":99}"#.utf8)
        let store = FlakyFeatureStore(record: newer, unreadable: true)
        let diagnostics = Collector<PrivacyManagerDiagnostic>()
        let gate = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: [.push, .contacts]), store: store,
            diagnosticHandler: diagnostics.append)
        gate.enableFeatures(.messageCenter)
        store.unreadable = false
        #expect(gate.retryHeldStore())
        gate.enableFeatures(.featureFlags)
        #expect(gate.isHoldingWrites)
        #expect(gate.enabledFeatures == [.messageCenter, .featureFlags])
        #expect(store.writes == 0)
        #expect((try? store.load()) == newer)
        guard case .saveFailed(_, let error as PrivacyManagerDiagnostic.StoredStateError) = diagnostics.all.last,
            case .unsupportedVersion(99, _) = error
        else {
            Issue.record("expected saveFailed with the newer version, got \(diagnostics.all)")
            return
        }
    }

    /// A revocation another process began while this one could not read the record survives the merge, and a reset
    /// does not undo what it switched off.
    @Test func aPendingRevocationInTheRecordSurvivesTheMergeOfHeldWrites() {
        var revoked = FeatureStateRecord(
            enabledFeatures: [], decidedFeatures: .all, deniedConsentCategories: [.analytics, .advertising])
        revoked.pendingRevocation = PendingRevocation(anonymousIdentifier: UUID(), isErasureOwed: true)
        let store = FlakyFeatureStore(record: revoked.encoded(), unreadable: true)
        let gate = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .all, resetEnabledFeatures: true), store: store)
        gate.enableFeatures(.messageCenter)
        store.unreadable = false
        #expect(!gate.retryHeldStore())
        #expect(gate.enabledFeatures == .messageCenter)
        #expect(store.record?.pendingRevocation == revoked.pendingRevocation)
        #expect(store.record?.decidedFeatures == revoked.decidedFeatures)
        #expect(store.record?.enabledFeatures == .messageCenter)
        #expect(store.record?.deniedConsentCategories == [.analytics, .advertising])
    }

    @Test func aResetDoesNotDeleteARecordItCannotRead() {
        let store = FlakyFeatureStore(record: userRecord.encoded(), unreadable: true)
        let gate = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .push, resetEnabledFeatures: true), store: store)
        #expect(gate.enabledFeatures == [])
        #expect(store.writes == 0)
        // Once readable, the reset applies and the refusals it keeps survive.
        store.unreadable = false
        gate.retryHeldStore()
        #expect(gate.enabledFeatures == .push)
        #expect(store.record?.decidedFeatures == [])
        #expect(store.record?.deniedConsentCategories == [.advertising])
    }

    @Test func aRecordThatIsThereButWrongKeepsTheCorruptRecordBehaviour() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let url = directory.url.appending(path: "state.json")
        #expect(mkfifo(url.path(percentEncoded: false), 0o600) == 0)
        let gate = manager(.push, store: FileFeatureStore(url: url))
        #expect(gate.enabledFeatures == .push)
        #expect(!gate.isHoldingWrites)
        guard case .loadFailed = gate.startupDiagnostics.first else {
            Issue.record("expected loadFailed, got \(gate.startupDiagnostics)")
            return
        }
    }

    /// Seeded random changes while held, the record readable again at a random step: after every step the gate
    /// equals a model that holds changes and then merges them over the stored record, and nothing is written while
    /// held. A failure prints its seed.
    @Test func randomChangesWhileHeldMergeLikeTheModel() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let flags: [Feature] = [.push, .analytics, .contacts, .messageCenter, .featureFlags]
        let configured = Feature.push
        for _ in 0..<500 {
            let all = FeatureCatalog.builtIn.allFeatures
            let storedDecided = Feature(rawValue: UInt.random(in: 0...0x1FF, using: &random)).intersection(all)
            let storedValues = Feature(rawValue: UInt.random(in: 0...0x1FF, using: &random)).intersection(storedDecided)
            let store = FlakyFeatureStore(
                record: FeatureStateRecord(enabledFeatures: storedValues, decidedFeatures: storedDecided).encoded(),
                unreadable: true)
            let gate = manager(configured, store: store)
            var (held, decided, values, touched) = (true, Feature(), Feature(), Feature())
            func local() -> Feature { held ? values : values.union(configured.subtracting(decided)) }
            let steps = Int.random(in: 1...10, using: &random)
            let readableAt = Int.random(in: 0...steps, using: &random)
            for step in 0..<steps {
                if step == readableAt { store.unreadable = false }
                let flag = flags.randomElement(using: &random)!
                let on = Bool.random(using: &random)
                on ? gate.enableFeatures(flag) : gate.disableFeatures(flag)
                let before = (decided, values)
                // While held, turning a flag off always decides it: the unread record may have it on.
                if local().contains(flag) != on || (held && !on) {
                    decided.insert(flag)
                    if on { values.insert(flag) } else { values.remove(flag) }
                    if held { touched.insert(flag) }
                }
                if held && (decided, values) != before && !store.unreadable {
                    decided = storedDecided.subtracting(touched).union(decided.intersection(touched))
                    values = storedValues.subtracting(touched).union(values.intersection(touched)).intersection(decided)
                    held = false
                }
                #expect(gate.enabledFeatures == local(), "seed \(seed)")
                #expect(gate.isHoldingWrites == held, "seed \(seed)")
                if held { #expect(store.writes == 0, "seed \(seed)") }
            }
            if !held {
                // Every flag decided off since the stored record owes a purge (nothing here purges).
                var record = try #require(store.record, "seed \(seed)")
                let off = decided.subtracting(values).subtracting(storedDecided.subtracting(storedValues))
                #expect(record.purgeOwedFeatures.isSuperset(of: off), "seed \(seed)")
                record.purgeOwedFeatures = []
                #expect(record == FeatureStateRecord(enabledFeatures: values, decidedFeatures: decided), "seed \(seed)")
            }
        }
    }
}

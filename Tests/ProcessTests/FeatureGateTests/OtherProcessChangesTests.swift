#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A watcher double: reports a change when the test says so.
final class ManualDataDirectoryWatcher: DataDirectoryWatcher {
    private let handlers = LockedValue<[UInt64: @Sendable (DataDirectoryChange) -> Void]>([:])
    private let nextID = LockedValue<UInt64>(0)

    func watch(
        _ directory: PrivacyDataDirectory, handler: @escaping @Sendable (DataDirectoryChange) -> Void
    ) throws(FileStoreError) -> ObservationToken {
        let id = nextID.withLock {
            $0 += 1; return $0
        }
        handlers.withLock { $0[id] = handler }
        return ObservationToken { [handlers] in _ = handlers.withLock { $0.removeValue(forKey: id) } }
    }

    var watching: Int { handlers.withLock { $0.count } }

    func report(_ change: DataDirectoryChange) {
        for handler in handlers.withLock({ Array($0.values) }) { handler(change) }
    }
}

/// A running gate follows what other processes write to its data directory (``PrivacyManager/reloadStoredState()``,
/// ``PrivacyManager/watchForChangesFromOtherProcesses(in:watcher:onLedgerChange:)``, ``SystemDataDirectoryWatcher``).
@Suite struct OtherProcessChangesTests {
    static let configuration = PrivacyConfiguration(enabledFeatures: [.push])

    @Test func aReloadTakesWhatAnotherProcessDecidedAndDeliversOnce() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url)
        let store = FileFeatureStore(url: data.stateFile)
        let privacy = PrivacyManager(configuration: Self.configuration, store: store)
        let other = PrivacyManager(configuration: Self.configuration, store: FileFeatureStore(url: data.stateFile))
        let changes = Collector<FeatureChange>()
        let token = privacy.observe { changes.append($0) }
        defer { token.cancel() }

        other.updateFeatures(enable: .analytics, disable: .push)
        #expect(privacy.enabledFeatures == .push)
        privacy.reloadStoredState()
        #expect(privacy.enabledFeatures == .analytics)
        #expect(privacy.reason(for: .push).source == .storedState)
        // Nothing new: nothing delivered, nothing written.
        let before = try Data(contentsOf: data.stateFile)
        privacy.reloadStoredState()
        #expect(changes.all == [FeatureChange(previous: .push, current: .analytics)])
        #expect(try Data(contentsOf: data.stateFile) == before)
        // This process's own decision is merged with the other's on its next save, never over it.
        privacy.enableFeatures(.contacts)
        other.reloadStoredState()
        #expect(other.enabledFeatures == [.analytics, .contacts])
    }

    @Test func aRefusalAnotherProcessSavedReadsAsRefusedAtOnce() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url)
        let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics], permittedUntilAsked: [.analytics])
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: [.analytics, .push]),
            store: FileFeatureStore(url: data.stateFile), consentPolicy: policy)
        #expect(privacy.isEnabled(.analytics))
        let record = FeatureStateRecord(enabledFeatures: [], decidedFeatures: [], deniedConsentCategories: [.analytics])
        try FileFeatureStore(url: data.stateFile).save(record.encoded())
        privacy.reloadStoredState()
        #expect(!privacy.isEnabled(.analytics))
        #expect(privacy.isEnabled(.push))
        #expect(privacy.reason(for: .analytics).withholdingConsent[.analytics] == .denied)
    }

    @Test func aNewerOrCorruptRecordChangesNothingAndIsNeverOverwritten() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url)
        let diagnostics = Collector<String>()
        let privacy = PrivacyManager(
            configuration: Self.configuration, store: FileFeatureStore(url: data.stateFile),
            diagnosticHandler: { diagnostics.append(String(describing: $0)) })
        privacy.enableFeatures(.analytics)
        for found in [#"{"version":99,"enabledFeatures":0}"#, #"{"version":"#] {
            try Data(found.utf8).write(to: data.stateFile)
            privacy.reloadStoredState()
            #expect(privacy.enabledFeatures == [.push, .analytics])
            #expect(try String(contentsOf: data.stateFile, encoding: .utf8) == found)
        }
        #expect(diagnostics.all.count == 2)
    }

    @Test func aRecordThatBecomesUnreadableFailsClosedAndIsMergedOnceReadable() throws {
        let store = FlakyFeatureStore(
            record: FeatureStateRecord(enabledFeatures: .analytics, decidedFeatures: .analytics).encoded(),
            unreadable: false)
        let privacy = PrivacyManager(configuration: Self.configuration, store: store)
        #expect(privacy.enabledFeatures == [.push, .analytics])
        store.unreadable = true
        privacy.reloadStoredState()
        // The undecided flag is off until the record can be read; the decided one keeps its last known value.
        #expect(privacy.isHoldingWrites)
        #expect(privacy.enabledFeatures == .analytics)
        privacy.disableFeatures(.analytics)
        #expect(store.writes == 0)
        store.unreadable = false
        privacy.reloadStoredState()
        #expect(!privacy.isHoldingWrites)
        #expect(privacy.enabledFeatures == .push)
        #expect(store.record?.decidedFeatures == .analytics)
        #expect(store.record?.enabledFeatures == [])
    }

    /// A payload is the raw bits of the flags it disables, in decimal; anything else is invalid.
    struct BitsInterpreter: RemotePayloadInterpreter {
        struct Invalid: Error {}
        func disables(in payload: Data) throws -> RemoteDisables {
            guard let bits = UInt(String(decoding: payload, as: UTF8.self)) else { throw Invalid() }
            return RemoteDisables(features: Feature(rawValue: bits))
        }
    }

    @Test func aPayloadAnotherProcessKeptAppliesAndAnUnreadableOneDisablesEverything() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url)
        func gate() -> PrivacyManager {
            PrivacyManager(
                configuration: PrivacyConfiguration(enabledFeatures: [.push, .analytics]),
                store: FileFeatureStore(url: data.stateFile),
                remoteLayer: RemoteLayerFile(url: data.remoteLayerFile, interpreter: BitsInterpreter()))
        }
        let (privacy, other) = (gate(), gate())
        try other.applyRemotePayload(Data("\(Feature.push.rawValue)".utf8))
        privacy.reloadStoredState()
        #expect(privacy.remoteDisabledFeatures == .push)
        #expect(privacy.enabledFeatures == .analytics)
        try Data("not bits".utf8).write(to: data.remoteLayerFile)
        privacy.reloadStoredState()
        #expect(privacy.enabledFeatures == [])
    }

    @Test func theWatcherRoutesStateAndLedgerChangesUntilCancelled() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url)
        let privacy = PrivacyManager(configuration: Self.configuration, store: FileFeatureStore(url: data.stateFile))
        let watcher = ManualDataDirectoryWatcher()
        let ledgerChanges = Collector<Int>()
        let token = try privacy.watchForChangesFromOtherProcesses(in: data, watcher: watcher) {
            ledgerChanges.append(1)
        }
        try FileFeatureStore(url: data.stateFile).save(
            FeatureStateRecord(enabledFeatures: [], decidedFeatures: .push).encoded())
        watcher.report(.ledger)
        #expect(privacy.isEnabled(.push))
        #expect(ledgerChanges.all.count == 1)
        watcher.report(.state)
        #expect(!privacy.isEnabled(.push))
        #expect(ledgerChanges.all.count == 1)
        token.cancel()
        #expect(watcher.watching == 0)
    }

    @Test func theSystemWatcherReportsEachFileAndCreatesNothing() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        // The data directory does not exist yet: watching must not create it.
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let seen = LockedValue<DataDirectoryChange>([])
        let token = try SystemDataDirectoryWatcher().watch(data) { change in seen.withLock { $0.formUnion(change) } }
        defer { token.cancel() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)

        try FileFeatureStore(url: data.stateFile).save(FeatureStateRecord(enabledFeatures: .push).encoded())
        #expect(eventually { seen.withLock { $0.contains(.state) } })
        seen.withLock { $0 = [] }
        try FileConsentLedger(url: data.consentLedgerFile).append(
            ConsentRecord(
                category: .analytics, previousStatus: .unknown, newStatus: .denied, time: Date(), policyVersion: 1,
                source: .user))
        #expect(eventually { seen.withLock { $0.contains(.ledger) } })
        seen.withLock { $0 = [] }
        try FileFeatureStore(url: data.remoteLayerFile).save(Data("{}".utf8))
        #expect(eventually { seen.withLock { $0.contains(.remoteLayer) } })
        // A file that is not FeatureGate's is not reported.
        seen.withLock { $0 = [] }
        #expect(
            FileManager.default.createFile(
                atPath: data.url.appending(path: "other").path(percentEncoded: false), contents: nil))
        try FileFeatureStore(url: data.stateFile).save(FeatureStateRecord(enabledFeatures: []).encoded())
        #expect(eventually { seen.withLock { $0.contains(.state) } })
        #expect(seen.withLock { $0 } == .state)
    }

    @Test func protectedDataBecomingAvailableRetriesTheHeldStore() throws {
        let store = FlakyFeatureStore(record: nil, unreadable: true)
        let privacy = PrivacyManager(configuration: Self.configuration, store: store)
        let center = NotificationCenter()
        let token = privacy.reloadWhenProtectedDataBecomesAvailable(
            NotificationCenterProtectedDataAvailability(center: center))
        privacy.enableFeatures(.analytics)
        #expect(privacy.isHoldingWrites)
        store.unreadable = false
        center.post(name: NotificationCenterProtectedDataAvailability.protectedDataDidBecomeAvailable, object: nil)
        #expect(!privacy.isHoldingWrites)
        #expect(store.record?.enabledFeatures == .analytics)
        token.cancel()
        store.unreadable = true
        privacy.reloadStoredState()
        store.unreadable = false
        center.post(name: NotificationCenterProtectedDataAvailability.protectedDataDidBecomeAvailable, object: nil)
        #expect(privacy.isHoldingWrites)
    }

    // MARK: - Real processes

    @Test func denialsAndEnablesInAnotherProcessReachARunningGate() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics], permittedUntilAsked: [.analytics])
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: [.analytics, .push]),
            store: FileFeatureStore(url: data.stateFile), consentPolicy: policy)
        #expect(privacy.enabledFeatures == [.analytics, .push])
        let changes = Collector<FeatureChange>()
        let observation = privacy.observe { changes.append($0) }
        let ledgerChanges = Collector<Int>()
        let watch = try privacy.watchForChangesFromOtherProcesses(in: data) { ledgerChanges.append(1) }
        defer {
            watch.cancel()
            observation.cancel()
        }
        let push = Feature.push.rawValue

        var expected: [FeatureChange] = []
        var current = privacy.enabledFeatures
        let rounds = 20
        for round in 0..<rounds {
            let enable = round % 2 == 1
            #expect(
                try runFeatureStoreWriter([
                    "set", data.url.path(percentEncoded: false), enable ? "\(push)" : "0", enable ? "0" : "\(push)",
                ]) == 0)
            let next = enable ? current.union(.push) : current.subtracting(.push)
            #expect(eventually { privacy.enabledFeatures == next }, "round \(round)")
            expected.append(FeatureChange(previous: current, current: next))
            current = next
        }
        // A denial made in another process through its consent manager: the ledger and the gate state.
        #expect(try runFeatureStoreWriter(["consent", data.url.path(percentEncoded: false), "denied"]) == 0)
        #expect(eventually { !privacy.isEnabled(.analytics) })
        expected.append(FeatureChange(previous: current, current: current.subtracting(.analytics)))
        #expect(eventually { !ledgerChanges.all.isEmpty })
        #expect(eventually { changes.all.count == expected.count })
        #expect(changes.all == expected)
    }

    @Test func processesWritingWhileAGateWatchesLeaveItWithWhatIsStored() throws {
        let seed = MultiProcessTests.seed()
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        var catalog = FeatureCatalog.builtIn
        for tag in 0..<3 {
            for index in 0..<4 {
                catalog = try catalog.registering("p\(tag)f\(index)", as: .custom(bit: 16 + 4 * tag + index))
            }
        }
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
            catalog: catalog)
        let changes = Collector<FeatureChange>()
        let observation = privacy.observe { changes.append($0) }
        let watch = try privacy.watchForChangesFromOtherProcesses(in: data)
        defer {
            watch.cancel()
            observation.cancel()
        }
        let children = try (0..<3).map { tag in
            try MultiProcessTests.Child(
                directory: data.url, logs: directory.url, tag: tag, seed: seed &+ UInt64(tag), operations: 500,
                base: (tag + 1) * 1_000_000)
        }
        // This process changes its own flags meanwhile: 500 more operations.
        var random = SeededGenerator(seed: seed)
        var own: Feature = []
        for _ in 0..<500 {
            own = Feature([Feature.analytics, .push].filter { _ in Bool.random(using: &random) })
            privacy.updateFeatures(enable: own, disable: Feature([.analytics, .push]).subtracting(own))
        }
        for child in children { child.process.waitUntilExit() }
        var wanted = own
        for child in children {
            let (steps, done) = child.steps()
            #expect(done, "seed \(seed)")
            var expectation = MultiProcessTests.Expectation()
            expectation.apply(steps)
            wanted.formUnion(MultiProcessTests.ownFlags(expectation.flags, tag: child.tag))
        }
        #expect(eventually { privacy.enabledFeatures == wanted }, "seed \(seed)")
        // (This process's last take-away is saved by its flusher, off this thread: stored once it has run.)
        #expect(
            eventually {
                (try? FeatureStateRecord(decoding: Data(contentsOf: data.stateFile)))?.enabledFeatures == wanted
            }, "seed \(seed)")
        // Delivered once per real change, in order: each change starts where the one before ended.
        let delivered = changes.all
        #expect(delivered.allSatisfy { $0.previous != $0.current }, "seed \(seed)")
        #expect(zip(delivered, delivered.dropFirst()).allSatisfy { $0.current == $1.previous }, "seed \(seed)")
        #expect(delivered.last?.current == wanted, "seed \(seed)")
    }
}
#endif

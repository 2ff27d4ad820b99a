#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import Testing

/// `resetEnabledFeatures` against what other processes and other versions of the package wrote.
@Suite struct StartupResetTests {
    /// A record a newer version wrote: the reset would write this version's format over it and lose what it does
    /// not understand.
    static let newerRecord = Data(
        #"{"decidedFeatures":4,"deniedConsentCategories":["advertising"],"enabledFeatures":4,"version":3,"more":1}"#
            .utf8)

    @Test func aResetKeepsARecordOfANewerFormatAndReportsIt() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let url = directory.url.appending(path: "featuregate-state.json")
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try Self.newerRecord.write(to: url)
        let diagnostics = Collector<PrivacyManagerDiagnostic>()
        let gate = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .analytics, resetEnabledFeatures: true),
            store: FileFeatureStore(url: url), diagnosticHandler: { diagnostics.append($0) })

        #expect(try Data(contentsOf: url) == Self.newerRecord)
        guard
            case .storedStateNewerNotReset(let store, .unsupportedVersion(3, FeatureStateRecord.currentVersion)) =
                gate.startupDiagnostics.first
        else {
            Issue.record("expected storedStateNewerNotReset, got \(gate.startupDiagnostics)")
            return
        }
        #expect(store == FileFeatureStore(url: url).description)
        #expect(gate.startupDiagnostics.count == 1 && diagnostics.all.count == 1)
        #expect("\(diagnostics.all[0])".contains("not reset"))
        #expect(gate.enabledFeatures == .analytics)
        #expect(gate.reason(for: .analytics).source == .unreadableStoredState)

        // Later saves leave it alone too.
        gate.disableFeatures(.analytics)
        #expect(try Data(contentsOf: url) == Self.newerRecord)
    }

    /// Another process (an extension) records a refusal after this one looked at the store and before it reset
    /// it: the reset is a read-modify-write under the store's lock, so the refusal survives.
    @Test func aRefusalSavedByAnotherProcessDuringTheResetIsKept() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let url = directory.url.appending(path: "featuregate-state.json")
        try FileFeatureStore(url: url).save(FeatureStateRecord(enabledFeatures: [.push, .analytics]).encoded())
        let refusal = FeatureStateRecord(
            enabledFeatures: .push, decidedFeatures: [.push, .analytics], deniedConsentCategories: [.analytics])
        let store = InterleavedFeatureStore(inner: FileFeatureStore(url: url)) {
            // A store of its own on the same file: it shares nothing in memory with the manager's.
            try FileFeatureStore(url: url).update { _ in refusal.encoded() }
        }

        let gate = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .all, resetEnabledFeatures: true), store: store)

        #expect(store.interleavings == 1)
        let record = try FeatureStateRecord(decoding: try #require(try FileFeatureStore(url: url).load()))
        #expect(record.deniedConsentCategories == [.analytics])
        #expect(record.decidedFeatures.isEmpty && record.enabledFeatures.isEmpty)
        #expect(gate.reason(for: .push).source == .reset)
    }

    /// Many rounds of the same race on one file, each with a different set of refusals and decisions: after every
    /// reset, the record holds exactly the refusals of the last write before it and no decision.
    @Test func noRefusalIsLostToAResetAcrossManyRounds() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let url = directory.url.appending(path: "featuregate-state.json")
        let categories: [ConsentCategory] = [.analytics, .advertising, .thirdPartySharing, ConsentCategory("custom")]
        for round in 0..<200 {
            let refused = Set(categories.enumerated().filter { round >> $0.offset & 1 == 1 }.map(\.element))
            try FileFeatureStore(url: url).save(FeatureStateRecord(enabledFeatures: .push).encoded())
            let written = FeatureStateRecord(
                enabledFeatures: Feature(rawValue: UInt(round) & 0x77), deniedConsentCategories: refused)
            let store = InterleavedFeatureStore(inner: FileFeatureStore(url: url)) {
                try FileFeatureStore(url: url).save(written.encoded())
            }
            _ = PrivacyManager(
                configuration: PrivacyConfiguration(enabledFeatures: [], resetEnabledFeatures: true), store: store)
            let record = try FeatureStateRecord(decoding: try #require(try FileFeatureStore(url: url).load()))
            #expect(
                record
                    == FeatureStateRecord(enabledFeatures: [], decidedFeatures: [], deniedConsentCategories: refused),
                "round \(round)")
        }
    }

    /// Real child processes record refusals and grants while this process launches again and again with the reset
    /// set: after all of them, the gate state holds exactly the refusals each child's last answer left. A reset
    /// that read, then deleted or rewrote without the lock, would erase a refusal saved in between.
    @Test func refusalsOtherProcessesSaveSurviveResetsAtEveryLaunch() throws {
        let seed = MultiProcessTests.seed()
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let operations = 400
        let children = try (0..<2).map { tag in
            try MultiProcessTests.Child(
                directory: data.url, logs: directory.url, tag: tag, seed: seed &+ UInt64(tag), operations: operations,
                base: (tag + 1) * 1_000_000)
        }
        var launches = 0
        while children.contains(where: \.process.isRunning) || launches < 10 {
            let gate = PrivacyManager(
                configuration: PrivacyConfiguration(enabledFeatures: [], resetEnabledFeatures: true),
                store: FileFeatureStore(url: data.stateFile))
            // A reset never waits long for a child's lock: past the bound it is held (and done by a retry).
            let unexpected = gate.startupDiagnostics.filter {
                if case .storeBusyWritesHeld = $0 { false } else { true }
            }
            #expect(unexpected.isEmpty, "seed \(seed): \(unexpected)")
            launches += 1
        }
        for child in children { child.process.waitUntilExit() }

        let record = try FeatureStateRecord(decoding: try #require(try FileFeatureStore(url: data.stateFile).load()))
        var refusals = 0
        for child in children {
            #expect(child.process.terminationStatus == 0, "seed \(seed), child \(child.tag)")
            let (steps, done) = child.steps()
            #expect(done && steps.allSatisfy(\.acknowledged), "seed \(seed), child \(child.tag)")
            var expected = MultiProcessTests.Expectation()
            expected.apply(steps)
            for index in 0..<4 {
                let category = MultiProcessTests.category(index, tag: child.tag)
                let refused = expected.statuses[index] == .denied
                #expect(record.deniedConsentCategories.contains(category) == refused, "seed \(seed), \(category)")
                refusals += expected.records[index, default: []].filter { $0 == .denied }.count
            }
        }
        #expect(refusals > 20 && launches >= 10, "seed \(seed): too few refusals or launches to prove anything")
    }
}

/// A store that runs `between` once, right after its first `load()` returns: what another process writes after
/// this one read the store and before it writes.
final class InterleavedFeatureStore: FeatureStore, CustomStringConvertible {
    private let inner: FileFeatureStore
    private let between: @Sendable () throws -> Void
    private let count = LockedValue(0)

    init(inner: FileFeatureStore, between: @escaping @Sendable () throws -> Void) {
        self.inner = inner
        self.between = between
    }

    /// How many times `between` ran.
    var interleavings: Int { count.withLock { $0 } }
    var description: String { inner.description }

    func load() throws -> Data? {
        let data = try inner.load()
        let first = count.withLock { count in
            defer { count = 1 }
            return count == 0
        }
        if first { try between() }
        return data
    }

    func save(_ record: Data) throws { try inner.save(record) }
    func remove() throws { try inner.remove() }
    func update(_ transform: (Data?) -> Data?) throws { try inner.update(transform) }
}
#endif

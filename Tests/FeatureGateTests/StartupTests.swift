import FeatureGate
import Foundation
import PackageTestSupport
import Testing

@Suite struct StartupTests {
    @Test func storedStateWinsOverTheConfiguration() {
        let store = RecordingFeatureStore(stored: .contacts)
        let gate = manager(.all, store: store)
        #expect(gate.enabledFeatures == .contacts)
        #expect(gate.startupDiagnostics.isEmpty)
    }

    @Test func configurationIsUsedWhenNothingIsStored() {
        #expect(manager([.push, .analytics], store: RecordingFeatureStore()).enabledFeatures == [.push, .analytics])
    }

    @Test func startUpWritesNothing() {
        for store in [RecordingFeatureStore(), RecordingFeatureStore(stored: .push)] {
            _ = manager(.all, store: store)
            #expect(store.calls == .init(loads: 1, saves: 0, removes: 0))
        }
    }

    @Test func startUpOnAFileStoreCreatesNoFileOrDirectory() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = FileFeatureStore(url: directory.url.appending(path: "state/features.json"))
        let gate = manager(.all, store: store)
        gate.enabledFeatures = .all  // a no-op: already all
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        gate.disableFeatures(.push)  // a real change creates the directory and the file
        // Only push is decided; every other flag still follows the configuration. Push owes its purge.
        var expected = FeatureStateRecord(enabledFeatures: [], decidedFeatures: .push)
        expected.purgeOwedFeatures = .push
        #expect(try store.load().map { try FeatureStateRecord(decoding: $0) } == expected)
        #expect(gate.enabledFeatures == Feature.all.subtracting(.push))
    }

    @Test func writesPersistOnlyRealChanges() {
        let store = RecordingFeatureStore()
        let gate = manager([], store: store)
        gate.enableFeatures(.push)
        gate.enableFeatures(.push)
        gate.disableFeatures([])
        gate.disableFeatures(.analytics)  // already off: decides nothing, writes nothing
        gate.enabledFeatures = .push
        gate.remoteDisabledFeatures = .push
        #expect(store.calls.saves == 1)
        gate.disableFeatures(.push)
        #expect(store.calls.saves == 2)
        #expect(store.storedFeatures == [])
    }

    @Test func resetDiscardsTheStoredDecisions() throws {
        let store = RecordingFeatureStore(stored: .all)
        let gate = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .push, resetEnabledFeatures: true),
            store: store
        )
        #expect(gate.enabledFeatures == .push)
        #expect(
            try FeatureStateRecord(decoding: try #require(store.record))
                == FeatureStateRecord(enabledFeatures: [], decidedFeatures: []))
        #expect(store.calls.saves == 1)
        #expect(gate.reason(for: .push).source == .reset)

        // The next launch with the reset still set finds nothing to discard and writes nothing.
        _ = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .push, resetEnabledFeatures: true), store: store)
        #expect(store.calls.saves == 1)
    }

    /// A refusal the consent ledger failed to record lives only in the stored state: the reset keeps it.
    @Test func resetKeepsTheConsentRefusalsOfTheStoredState() async throws {
        let kept = FeatureStateRecord(
            enabledFeatures: .push, decidedFeatures: [.push, .analytics], deniedConsentCategories: [.analytics])
        let store = RecordingFeatureStore(record: kept.encoded())
        let gate = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .analytics, resetEnabledFeatures: true),
            store: store
        )
        #expect(gate.reason(for: .push).source == .reset)
        let record = try FeatureStateRecord(decoding: try #require(store.record))
        #expect(record.deniedConsentCategories == [.analytics])
        #expect(record.decidedFeatures.isEmpty && record.enabledFeatures.isEmpty)
        #expect(store.calls.removes == 0)

        let consent = ConsentManager(privacy: gate, ledger: InMemoryConsentLedger())
        #expect(await consent.status(for: .analytics) == .denied)
        #expect(!gate.isEnabled(.analytics))
    }

    @Test func resetWithNothingStoredDeletesNothing() {
        let store = RecordingFeatureStore()
        let gate = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: [], resetEnabledFeatures: true),
            store: store
        )
        #expect(store.calls == .init(loads: 1, saves: 0, removes: 0))
        #expect(gate.reason(for: .push).source == .configuration)
    }

    @Test func storedUnknownBitsAreDroppedAndReported() {
        let raw = Feature.push.rawValue | 1 << 3 | 1 << 40
        let store = RecordingFeatureStore(record: Data(#"{"version":1,"enabledFeatures":\#(raw)}"#.utf8))
        let gate = manager([], store: store)
        #expect(gate.enabledFeatures == .push)
        guard case .unknownFlagsDropped(_, let dropped) = gate.startupDiagnostics.first else {
            Issue.record("expected unknownFlagsDropped, got \(gate.startupDiagnostics)")
            return
        }
        #expect(dropped.rawValue == 1 << 3 | 1 << 40)
    }

    @Test(arguments: [
        ("", "an empty record"),
        ("not json", "\"not json\""),
        (#"{"version":1}"#, "version\":1}"),
        (#"{"version":1,"enabledFeatures":-1}"#, "-1"),
        (#"{"version":1,"enabledFeatures":"all"}"#, "all"),
        (#"{"version":0,"enabledFeatures":1}"#, "version 0"),
        (#"[1,2]"#, "[1,2]"),
    ])
    func corruptStoredStateFallsBackToTheConfigurationNeverAll(record: String, found: String) {
        let diagnostics = Collector<PrivacyManagerDiagnostic>()
        let gate = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .analytics),
            store: RecordingFeatureStore(record: Data(record.utf8)),
            diagnosticHandler: { diagnostics.append($0) }
        )
        #expect(gate.enabledFeatures == .analytics)
        #expect(gate.reason(for: .analytics).source == .unreadableStoredState)
        #expect(diagnostics.all.count == 1)
        guard case .storedStateUnreadable(_, .malformed(let description)) = gate.startupDiagnostics.first else {
            Issue.record("expected malformed, got \(gate.startupDiagnostics)")
            return
        }
        #expect(description.contains(found))
    }

    @Test func recordsFromANewerVersionAreRefused() {
        let store = RecordingFeatureStore(record: Data(#"{"version":3,"enabledFeatures":511}"#.utf8))
        let gate = manager([], store: store)
        #expect(gate.enabledFeatures == [])
        guard case .storedStateUnreadable(_, let error) = gate.startupDiagnostics.first else {
            Issue.record("expected a diagnostic")
            return
        }
        #expect(error == .unsupportedVersion(found: 3, supported: 2))
        #expect(store.calls.saves == 0)
    }

    @Test func aStoreThatThrowsOnLoadFailsClosedInsteadOfFallingBackToTheConfiguration() {
        let store = RecordingFeatureStore(record: FeatureStateRecord(enabledFeatures: .all).encoded(), failLoad: true)
        let gate = manager(.push, store: store)
        #expect(gate.enabledFeatures == [])
        #expect(gate.isHoldingWrites)
        guard case .storeUnreadableWritesHeld = gate.startupDiagnostics.first else {
            Issue.record("expected storeUnreadableWritesHeld, got \(gate.startupDiagnostics)")
            return
        }
        gate.enableFeatures(.analytics)
        #expect(gate.enabledFeatures == .analytics)
        #expect(store.calls.saves == 0)
        #expect(store.storedFeatures == .all)
    }

    @Test func recordsRoundTripAndIgnoreFieldsAddedLater() throws {
        let record = FeatureStateRecord(enabledFeatures: [.push, .featureFlags])
        #expect(try FeatureStateRecord(decoding: record.encoded()) == record)
        let later = Data(#"{"version":1,"enabledFeatures":4,"updatedAt":"2026-01-01"}"#.utf8)
        #expect(try FeatureStateRecord(decoding: later).enabledFeatures == .push)
    }

    /// The record is formatted by hand for speed; it must stay byte for byte what `JSONEncoder` writes, and read
    /// back as itself, whatever the bits and category names (quotes, backslashes, control characters, non-ASCII).
    @Test func versionTwoRecordsAreWhatJSONEncoderWritesAndRoundTrip() throws {
        struct Payload: Encodable {
            var decidedFeatures: UInt
            var deniedConsentCategories: [String]
            var enabledFeatures: UInt
            var version: Int
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let names = ["analytics", "a\"b", "back\\slash", "tab\t", "\u{1}", "é/ü", "😀", ""]
        var generator = SeededGenerator(seed: 0xFEA7_0002)
        for _ in 0..<500 {
            let decided = Feature(rawValue: UInt(truncatingIfNeeded: generator.next()))
            let enabled = Feature(rawValue: UInt(truncatingIfNeeded: generator.next())).intersection(decided)
            let chosen = names.filter { _ in generator.next() % 3 == 0 }
            let denied: Set<ConsentCategory> = Set(chosen.map { ConsentCategory($0) })
            let record = FeatureStateRecord(
                enabledFeatures: enabled, decidedFeatures: decided, deniedConsentCategories: denied)
            let expected = try encoder.encode(
                Payload(
                    decidedFeatures: decided.rawValue, deniedConsentCategories: chosen.sorted(),
                    enabledFeatures: enabled.rawValue, version: 2))
            #expect(record.encoded() == expected, "\(String(decoding: record.encoded(), as: UTF8.self))")
            #expect(try FeatureStateRecord(decoding: record.encoded()) == record)
        }
    }
}

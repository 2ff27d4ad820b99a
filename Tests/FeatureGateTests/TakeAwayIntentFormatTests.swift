import FeatureGate
import Foundation
import Testing

/// The take-away intent's file format, byte for byte: an intent written by an earlier version must still read, and
/// this one writes the same bytes (`JSONEncoder`, keys sorted, as `IntentJournal` writes it).
@Suite struct TakeAwayIntentFormatTests {
    /// An intent with every field, in the form version 1 writes.
    static let json =
        #"{"disable":16,"ledgerFile":"consent.jsonl","pendingRevocation":{"areSubsystemsPurged":false,"#
        + #""beganAt":1790000000,"isErasureOwed":true,"isIdentifierDeleted":false,"#
        + #""requestKey":"6C3E2A4B-8F1D-4E55-9A0B-1C2D3E4F5A6B"},"records":[],"refuse":["analytics"],"#
        + #""remote":{"base":"","entityTag":"\"16\"","file":"remote.json","payload":"MTY="},"#
        + #""stateFile":"state.json","version":1}"#

    static let intent = TakeAwayIntent(
        stateFile: "state.json", ledgerFile: "consent.jsonl", disable: .analytics, refuse: [.analytics],
        pendingRevocation: PendingRevocation(
            requestKey: UUID(uuidString: "6C3E2A4B-8F1D-4E55-9A0B-1C2D3E4F5A6B")!, anonymousIdentifier: nil,
            beganAt: Date(timeIntervalSince1970: 1_790_000_000), isErasureOwed: true),
        remote: TakeAwayIntent.RemoteIntent(
            file: "remote.json", base: "",
            record: RemoteLayerRecord(payload: Data("16".utf8), entityTag: "\"16\"")))

    @Test func anIntentEncodesToItsPinnedBytes() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(String(decoding: try encoder.encode(Self.intent), as: UTF8.self) == Self.json)
    }

    @Test func thePinnedBytesDecodeToTheIntent() throws {
        #expect(try JSONDecoder().decode(TakeAwayIntent.self, from: Data(Self.json.utf8)) == Self.intent)
    }

    @Test func anIntentOfTheFirstFormatWithoutAVersionStillReads() throws {
        let old = #"{"disable":4,"stateFile":"state.json"}"#
        let intent = try JSONDecoder().decode(TakeAwayIntent.self, from: Data(old.utf8))
        #expect(intent == TakeAwayIntent(stateFile: "state.json", disable: .push))
        #expect(intent.version == 1)
    }

    @Test func aRemoteIntentWithoutItsOptionalFieldsReadsAndWritesNone() throws {
        let json = #"{"base":"b","file":"remote.json","payload":"MTY="}"#
        let remote = try JSONDecoder().decode(TakeAwayIntent.RemoteIntent.self, from: Data(json.utf8))
        #expect(remote.entityTag == nil && remote.lastModified == nil && remote.payload == Data("16".utf8))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(String(decoding: try encoder.encode(remote), as: UTF8.self) == json)
    }
}

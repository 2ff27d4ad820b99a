import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// The package's JSON files and records, byte for byte, as earlier versions wrote them (their `Codable` conformances
/// are written out with one shared key type since issue 47: the bytes must not change).
@Suite struct FileFormatTests {
    static let time = Date(timeIntervalSinceReferenceDate: 800_000_000.5)
    static let record = ConsentRecord(
        category: .analytics, previousStatus: .unknown, newStatus: .granted, time: time, policyVersion: 2,
        source: .user)

    static func sorted() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    @Test func aConsentRecordEncodesByItsPropertyNamesAndReadsBack() throws {
        let json =
            #"{"category":"analytics","newStatus":"granted","policyVersion":2,"previousStatus":"unknown","#
            + #""source":"user","time":800000000.5}"#
        #expect(String(decoding: try Self.sorted().encode(Self.record), as: UTF8.self) == json)
        #expect(try JSONDecoder().decode(ConsentRecord.self, from: Data(json.utf8)) == Self.record)
        let missing = #"{"category":"analytics","newStatus":"granted","policyVersion":2,"source":"user","time":1}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ConsentRecord.self, from: Data(missing.utf8)) }
    }

    @Test func theRemoteLayerFileKeepsItsEnvelope() throws {
        let full = RemoteLayerRecord(
            payload: Data("16".utf8), entityTag: "\"16\"", lastModified: "Wed, 21 Oct 2015 07:28:00 GMT")
        #expect(
            String(decoding: try RemoteLayerFile.encoded(full), as: UTF8.self)
                == #"{"etag":"\"16\"","lastModified":"Wed, 21 Oct 2015 07:28:00 GMT","payload":"16","version":1}"#)
        let bare = RemoteLayerRecord(payload: Data("16".utf8))
        #expect(
            String(decoding: try RemoteLayerFile.encoded(bare), as: UTF8.self) == #"{"payload":"16","version":1}"#)
    }

    @Test func theAgeRangeStoreWritesAndReadsItsFile() throws {
        let directory = TemporaryDirectory()
        let store = FileAgeRangeAnswerStore(url: directory.url.appending(path: "age.json"))
        try store.save(.declined)
        #expect(try Data(contentsOf: store.url) == Data(#"{"answer":{"declined":{}},"version":1}"#.utf8))
        let range = AgeRangeAnswer.range(
            lowerBound: 13, upperBound: 15, declaration: .guardianDeclared, parentalControls: [.communicationLimits])
        try store.save(range)
        let json =
            #"{"answer":{"range":{"declaration":"guardianDeclared","lowerBound":13,"#
            + #""parentalControls":["communicationLimits"],"upperBound":15}},"version":1}"#
        #expect(String(decoding: try Data(contentsOf: store.url), as: UTF8.self) == json)
        #expect(try store.load() == range)
        try Data(#"{"version":1,"answer":{"range":{}}}"#.utf8).write(to: store.url)
        #expect(try store.load() == .range(lowerBound: nil, upperBound: nil))
    }

    @Test func aLedgerLineAndItsCheckpointKeepTheirBytes() throws {
        let directory = TemporaryDirectory()
        let ledger = FileConsentLedger(url: directory.url.appending(path: "consent.jsonl"))
        try ledger.append(Self.record)
        let bytes = try Data(contentsOf: ledger.url)
        let line =
            #"{"category":"analytics","newStatus":"granted","policyVersion":2,"previousStatus":"unknown","#
            + #""source":"user","time":"2026-05-09T06:13:20.500Z","v":1}"# + "\n"
        #expect(String(decoding: bytes, as: UTF8.self) == line)
        var digest = ConsentLedgerDigest()
        bytes.withUnsafeBytes { digest.add($0) }
        // JSONEncoder escapes "/" in the fingerprint's Base64 (the checkpoint is not written .withoutEscapingSlashes).
        let fingerprint = bytes.prefix(ConsentLedgerPosition.fingerprintLength).base64EncodedString()
            .replacingOccurrences(of: "/", with: #"\/"#)
        let checkpoint =
            #"{"answers":[{"category":"analytics","decidedAt":800000000.5,"expiryRecorded":false,"policyVersion":2,"#
            + #""source":"user","status":"granted","trusted":true}],"#
            + #""digest":"fnv1a64:\#(hex(digest.value))","fingerprint":"#
            + #""\#(fingerprint)","globalPrivacyControl":false,"ledgerLength":\#(bytes.count),"#
            + #""sourceAnswers":[{"category":"analytics","source":"user","status":"granted"}],"unreadableEntries":0,"#
            + #""v":1}"#
        #expect(String(decoding: try Data(contentsOf: ledger.checkpointURL), as: UTF8.self) == checkpoint)
    }

    private func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

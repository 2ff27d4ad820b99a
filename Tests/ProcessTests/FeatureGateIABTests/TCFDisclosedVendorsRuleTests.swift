#if os(macOS) || os(Linux)
import FeatureGate
import FeatureGateIAB
import Foundation
import PackageTestSupport
import Testing

/// TCF v2.3: a TC string created on or after 1 March 2026 must carry the disclosed-vendors segment. Without it the
/// string is invalid: decoding throws, `CMPConsent` reads its categories as unknown, `tcf decode` shows its fields
/// with an error naming the rule and exits 1. Older strings stay valid.
@Suite struct TCFDisclosedVendorsRuleTests {
    /// Deciseconds since 1970 of 2026-03-01T00:00:00Z.
    static let deadline = 17_723_232_000

    /// A core segment granting every purpose to the publisher (through the publisher-TC segment), created at
    /// `created` deciseconds, with or without a disclosed-vendors segment.
    static func string(created: Int, disclosed: Bool) -> String {
        var fields = CoreFields()
        fields.created = created
        fields.lastUpdated = created
        fields.purposeConsents = Set(1...10)
        var segments = [BitWriter.core(fields).base64URL]
        if disclosed {
            var segment = BitWriter()
            segment.append(1, 3, "")
            segment.appendVendorRanges([23...23, 47...48], maximum: 48, prefix: "")
            segments.append(segment.base64URL)
        }
        var publisher = BitWriter()
        publisher.append(3, 3, "")
        publisher.appendBitField(Set(1...10), 24, "")
        publisher.appendBitField([], 24, "")
        publisher.append(0, 6, "")
        segments.append(publisher.base64URL)
        return segments.joined(separator: ".")
    }

    @Test(arguments: [deadline - 1, deadline, deadline + 864_000])
    func theRuleAppliesFromTheFirstOfMarch2026(created: Int) throws {
        let withoutSegment = Self.string(created: created, disclosed: false)
        if created < Self.deadline {
            #expect(try TCString(withoutSegment).disclosedVendors == nil)
        } else {
            let error = #expect(throws: TCString.DecodingError.self) { try TCString(withoutSegment) }
            #expect(error?.kind == .invalidSegment && error?.segment == .disclosedVendors)
            #expect(error?.description.contains("TCF v2.3") == true)
        }
        #expect(try TCString(Self.string(created: created, disclosed: true)).disclosedVendors == [23, 47, 48])
    }

    @Test func cmpConsentReadsAPostDeadlineStringWithoutTheSegmentAsUnknown() {
        func consent(_ string: String) -> CMPConsent {
            CMPConsent(keys: [CMPKey.gdprApplies: .number(1), CMPKey.tcString: .string(string)])
        }
        let valid = consent(Self.string(created: Self.deadline, disclosed: true))
        #expect(valid.status(for: .analytics) == .granted && !valid.hasErrors)
        let invalid = consent(Self.string(created: Self.deadline, disclosed: false))
        #expect(invalid.status(for: .analytics) == .unknown && invalid.status(for: .advertising) == .unknown)
        #expect(invalid.diagnostics.first?.message.contains("TCF v2.3") == true)
        let older = consent(Self.string(created: Self.deadline - 10, disclosed: false))
        #expect(older.status(for: .analytics) == .granted && !older.hasErrors)
    }

    @Test func decodeShowsTheFieldsWithAnErrorNamingTheRuleAndExitsOne() throws {
        let string = Self.string(created: Self.deadline, disclosed: false)
        let run = try featuregate(["tcf", "decode", "--json", string])
        #expect(run.status == 1)
        let object = try run.jsonObject()
        #expect(object["created"] as? String == "2026-03-01T00:00:00Z")
        #expect(object["purposeConsents"] as? [Int] == Array(1...10))
        let diagnostics = try #require(object["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.first?["severity"] as? String == "error")
        #expect(diagnostics.first?["segment"] as? String == "disclosedVendors")
        #expect((diagnostics.first?["message"] as? String)?.contains("TCF v2.3 requires it") == true)
        let text = try featuregate(["tcf", "decode", string])
        #expect(text.status == 1)
        #expect(text.lines.contains("created: 2026-03-01T00:00:00Z"))
        #expect(text.lines.last?.hasPrefix("error: TC string disclosedVendors segment") == true)
    }

    @Test func decodeShowsDisclosedVendorsAsRanges() throws {
        let run = try featuregate(["tcf", "decode", "--json", Self.string(created: Self.deadline, disclosed: true)])
        #expect(run.status == 0)
        #expect(try run.jsonObject()["disclosedVendors"] as? [[Int]] == [[23, 23], [47, 48]])
    }

    @Test func applyReadsThePostDeadlineStringAsUnknownAndExitsOne() throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "tcf23-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys =
            #"{"IABTCF_gdprApplies": 1, "IABTCF_TCString": "\#(Self.string(created: Self.deadline, disclosed: false))"}"#
        try Data(keys.utf8).write(to: directory.appending(path: "keys.json"))
        let run = try featuregate(["tcf", "apply", "--keys", "keys.json", "--json"], in: directory)
        #expect(run.status == 1)
        let categories = try run.jsonObject()["categories"] as? [String: String]
        #expect(categories?["analytics"] == "unknown" && categories?["advertising"] == "unknown")
    }
}
#endif

#if os(macOS) || os(Linux)
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// `featuregate tcf apply`, run as a subprocess on key files.
@Suite struct TCFApplyCommandTests {
    /// Writes `json` to a fresh file and runs `tcf apply --keys FILE` with `arguments`.
    private func apply(_ json: String, _ arguments: [String] = ["--json"]) throws -> ToolRun {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "tcf-apply-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(json.utf8).write(to: directory.appending(path: "keys.json"))
        return try featuregate(["tcf", "apply", "--keys", "keys.json"] + arguments, in: directory)
    }

    @Test func jsonHasCategoriesFeaturesConsentModeAndDiagnostics() throws {
        let run = try apply(#"{"IABTCF_gdprApplies": 1, "IABTCF_PublisherConsent": "1000000100"}"#)
        #expect(run.status == 0)
        let object = try run.jsonObject()
        #expect(Set(object.keys) == ["categories", "features", "consentMode", "diagnostics"])
        #expect(
            object["categories"] as? [String: String]
                == ["analytics": "granted", "advertising": "denied", "thirdPartySharing": "unknown"])
        #expect(object["features"] as? [String] == ["analytics", "tags_and_attributes"])
        #expect(
            object["consentMode"] as? [String: String]
                == [
                    "analytics_storage": "granted", "ad_storage": "granted", "ad_user_data": "denied",
                    "ad_personalization": "denied",
                ])
        #expect((object["diagnostics"] as? [Any])?.isEmpty == true)
    }

    @Test func aMalformedSignalExitsOneAndStillPrintsTheFailClosedResult() throws {
        let run = try apply(
            #"{"IABTCF_gdprApplies": 1, "IABTCF_PublisherConsent": "1000000100", "IABTCF_TCString": "BOxx"}"#)
        #expect(run.status == 1)
        let object = try run.jsonObject()
        #expect((object["categories"] as? [String: String])?["analytics"] == "unknown")
        #expect(object["features"] as? [String] == [])
        let diagnostics = try #require(object["diagnostics"] as? [[String: String]])
        #expect(diagnostics.first?["severity"] == "error")
        #expect(diagnostics.first?["key"] == "IABTCF_TCString")
    }

    @Test func aWrongKindOfValueIsMalformed() throws {
        let run = try apply(#"{"IABTCF_gdprApplies": true, "IABUSPrivacy_String": 1}"#)
        #expect(run.status == 1)
        let object = try run.jsonObject()
        let keys = (object["diagnostics"] as? [[String: String]])?.compactMap { $0["key"] }
        #expect(keys == ["IABTCF_gdprApplies", "IABUSPrivacy_String"])
        let messages = (object["diagnostics"] as? [[String: String]])?.compactMap { $0["message"] } ?? []
        #expect(messages.first?.hasPrefix("found a Boolean") == true, "\(messages)")
    }

    @Test func aFractionalGDPRAppliesIsMalformedAndNamedAsFound() throws {
        let run = try apply(#"{"IABTCF_gdprApplies": 0.5}"#)
        #expect(run.status == 1)
        let diagnostics = try run.jsonObject()["diagnostics"] as? [[String: String]]
        #expect(diagnostics?.first?["key"] == "IABTCF_gdprApplies")
        #expect(diagnostics?.first?["message"]?.hasPrefix("found 0.5,") == true, "\(diagnostics ?? [])")
        #expect((try run.jsonObject()["categories"] as? [String: String])?["analytics"] == "unknown")
    }

    @Test func aFileThatIsNotAJSONObjectExitsOne() throws {
        let run = try apply("[1, 2]")
        #expect(run.status == 1)
        #expect((try run.jsonObject()["categories"] as? [String: String])?["analytics"] == "unknown")
    }

    @Test func vendorReadsThePurposeKeysForThatVendor() throws {
        let keys =
            #"{"IABTCF_gdprApplies": 1, "IABTCF_PurposeConsents": "1000000100", "IABTCF_VendorConsents": "00001"}"#
        // Without IABTCF_TCString the publisher's restrictions on the vendor are unknown: no grant, and it says why.
        let five = try apply(keys, ["--json", "--vendor", "5"])
        #expect((try five.jsonObject()["categories"] as? [String: String])?["analytics"] == "unknown")
        let diagnostics = try five.jsonObject()["diagnostics"] as? [[String: String]]
        #expect(diagnostics?.compactMap { $0["key"] } == ["IABTCF_TCString"])
        let six = try apply(keys, ["--json", "--vendor", "6"])
        #expect((try six.jsonObject()["categories"] as? [String: String])?["analytics"] == "denied")
    }

    @Test func usOptOutsDenyAndShareWithDecidesThirdPartySharing() throws {
        let run = try apply(
            #"{"IABTCF_gdprApplies": 1, "IABTCF_PublisherConsent": "1011001100", "IABTCF_VendorConsents": "0001","#
                + #" "IABUSPrivacy_String": "1YNN"}"#, ["--json", "--share-with", "4"])
        #expect(run.status == 0)
        let categories = try run.jsonObject()["categories"] as? [String: String]
        #expect(categories == ["analytics": "granted", "advertising": "granted", "thirdPartySharing": "granted"])
        #expect(try run.jsonObject()["features"] as? [String] == ["analytics", "contacts", "tags_and_attributes"])
        let optedOut = try apply(
            #"{"IABTCF_gdprApplies": 1, "IABTCF_PublisherConsent": "1011001100", "IABTCF_VendorConsents": "0001","#
                + #" "IABUSPrivacy_String": "1YYN"}"#, ["--json", "--share-with", "4"])
        #expect((try optedOut.jsonObject()["categories"] as? [String: String])?["thirdPartySharing"] == "denied")
    }

    @Test func textModePrintsOneLinePerValue() throws {
        let run = try apply(#"{"IABTCF_gdprApplies": 0}"#, [])
        #expect(run.status == 0)
        #expect(
            run.lines == [
                "advertising: unknown", "analytics: unknown", "thirdPartySharing: unknown", "features: none",
                "analytics_storage: denied", "ad_storage: denied", "ad_user_data: denied", "ad_personalization: denied",
            ])
    }

    @Test(arguments: [
        [], ["--json"], ["--keys"], ["--keys", "a", "b"], ["--keys", "a", "--vendor", "x"],
        ["--keys", "a", "--vendor", "0"],
        ["--keys", "a", "--keys", "b"],
    ])
    func usageErrorsExitTwo(arguments: [String]) throws {
        let run = try featuregate(["tcf", "apply"] + arguments)
        #expect(run.status == 2)
        #expect(run.output.isEmpty)
    }
}

/// `featuregate tcf apply` on the GPP state sections.
@Suite struct TCFApplyStateSectionTests {
    @Test func aCaliforniaSaleOptOutWithSection8ShowsThirdPartySharingDenied() throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "tcf-apply-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // usca (8): SaleOptOut = 1, SharingOptOut = 2, GPC subsection off.
        let keys = #"{"IABGPP_HDR_GppString": "DBABBg~BVYAAABA.Q", "IABGPP_GppSID": "8"}"#
        try Data(keys.utf8).write(to: directory.appending(path: "keys.json"))
        let run = try featuregate(["tcf", "apply", "--keys", "keys.json", "--json"], in: directory)
        #expect(run.status == 0)
        let categories = try run.jsonObject()["categories"] as? [String: String]
        #expect(categories?["thirdPartySharing"] == "denied")
        #expect(categories?["advertising"] == "unknown")
        let text = try featuregate(["tcf", "apply", "--keys", "keys.json"], in: directory)
        #expect(text.lines.contains("thirdPartySharing: denied"))
    }
}
#endif

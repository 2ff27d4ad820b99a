import Foundation
import Testing

/// `featuregate tcf decode`, run as a subprocess: exit statuses, the JSON object's exact keys, diagnostics.
@Suite struct TCFCommandTests {
    static let decodeKeys: Set<String> = [
        "version", "created", "lastUpdated", "cmpId", "cmpVersion", "consentScreen", "consentLanguage",
        "vendorListVersion", "tcfPolicyVersion", "isServiceSpecific", "useNonStandardTexts", "purposeOneTreatment",
        "publisherCC", "specialFeatureOptIns", "purposeConsents", "purposeLegitimateInterests", "vendorConsents",
        "vendorLegitimateInterests", "publisherRestrictions", "disclosedVendors", "allowedVendors",
        "publisherPurposeConsents", "publisherPurposeLegitimateInterests", "customPurposeConsents",
        "customPurposeLegitimateInterests", "diagnostics",
    ]

    @Test func decodeJSONHasExactlyTheDocumentedKeysAndTheDecodedValues() throws {
        let run = try featuregate([
            "tcf", "decode", "--json",
            "COrEAV4OrXx94ACABBENAHCIAD-AAAAAAACAAxAAAAgAIAwgAgAAAAEAgQAAAAAEAYQAQAAAACAAAABAAA"
                + ".IBAgAAAgAIAwgAgAAAAEAAAACA.QAagAQAgAIAwgA.cAAAAAAAITg=",
        ])
        #expect(run.status == 0)
        #expect(run.lines.count == 1)
        let object = try run.jsonObject()
        #expect(Set(object.keys) == Self.decodeKeys)
        #expect(object["version"] as? Int == 2)
        #expect(object["created"] as? String == "2019-12-04T18:53:00Z")
        #expect(object["vendorConsents"] as? [Int] == [23, 37, 47, 48, 53, 65, 98])
        #expect(object["vendorLegitimateInterests"] as? [Int] == [37, 47, 48, 53, 65, 98, 129])
        #expect(object["allowedVendors"] as? [Int] == [12, 23, 37, 47, 48, 53])
        #expect(object["disclosedVendors"] as? [Int] == [23, 37, 47, 48, 53, 65, 98, 129])
        #expect((object["publisherPurposeConsents"] as? [Int])?.count == 1)
        #expect(object["isServiceSpecific"] as? Bool == false)
        let diagnostics = try #require(object["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.allSatisfy { $0["severity"] as? String == "warning" })
    }

    @Test func absentSegmentsAreEmptyArrays() throws {
        let run = try featuregate(["tcf", "decode", "--json", "COtybn4PA_zT4KjACBENAPCIAEBAAECAAIAAAAAAAAAA"])
        #expect(run.status == 0)
        let object = try run.jsonObject()
        for key in [
            "disclosedVendors", "allowedVendors", "publisherPurposeConsents", "publisherPurposeLegitimateInterests",
            "customPurposeConsents", "customPurposeLegitimateInterests", "publisherRestrictions",
        ] {
            #expect((object[key] as? [Any])?.isEmpty == true, "\(key)")
        }
        #expect(object["purposeConsents"] as? [Int] == [2, 10])
        #expect(object["lastUpdated"] as? String == "2021-02-02T17:01:00Z")
    }

    @Test func publisherRestrictionsAreObjectsWithPurposeTypeAndVendors() throws {
        var core = BitWriter()
        CoreFields().write(to: &core)
        core.appendVendorBitField([], maximum: 0, prefix: "")
        core.appendVendorBitField([], maximum: 0, prefix: "")
        core.append(2, 12, "")
        core.append(2, 6, "")
        core.append(1, 2, "")
        core.appendVendorRanges([4...5], maximum: nil, prefix: "")
        core.append(9, 6, "")
        core.append(2, 2, "")
        core.appendVendorRanges([], maximum: nil, prefix: "")
        let run = try featuregate(["tcf", "decode", "--json", core.base64URL])
        #expect(run.status == 0)
        let restrictions = try #require(try run.jsonObject()["publisherRestrictions"] as? [[String: Any]])
        #expect(restrictions.count == 2)
        #expect(restrictions[0]["purpose"] as? Int == 2)
        #expect(restrictions[0]["type"] as? String == "requireConsent")
        #expect(restrictions[0]["vendors"] as? [Int] == [4, 5])
        #expect(restrictions[1]["type"] as? String == "requireLegitimateInterest")
        #expect(restrictions[1]["vendors"] as? [Int] == [])
    }

    @Test func aMalformedStringExitsOneWithADiagnosticNamingSegmentFieldAndOffset() throws {
        let run = try featuregate(["tcf", "decode", "--json", "COtybn4PA_zT4KjACBENAPCIAEBAAECAAIA"])
        #expect(run.status == 1)
        let object = try run.jsonObject()
        #expect(Set(object.keys) == Self.decodeKeys)
        #expect(object["version"] is NSNull)
        let diagnostics = try #require(object["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.count == 1)
        #expect(diagnostics[0]["severity"] as? String == "error")
        #expect(diagnostics[0]["segment"] as? String == "core")
        // 35 characters are 210 bits: the second letter of PublisherCC (bits 207...212) does not fit.
        #expect(diagnostics[0]["field"] as? String == "PublisherCC")
        #expect(diagnostics[0]["bitOffset"] as? Int == 207)
    }

    @Test func warningsNameTheSegmentTheyAreAbout() throws {
        let run = try featuregate([
            "tcf", "decode", "--json",
            "COrEAV4OrXx94ACABBENAHCIAD-AAAAAAACAAxAAAAgAIAwgAgAAAAEAgQAAAAAEAYQAQAAAACAAAABAAA"
                + ".IBAgAAAgAIAwgAgAAAAEAAAACA.QAagAQAgAIAwgA",
        ])
        #expect(run.status == 0)
        let diagnostics = try #require(try run.jsonObject()["diagnostics"] as? [[String: Any]])
        let segments = diagnostics.map { "\($0["segment"] ?? "")" }
        #expect(segments.last == "allowedVendors", "\(diagnostics)")
        #expect(Set(segments).isSubset(of: ["core", "allowedVendors"]))
    }

    @Test func aVersionOneStringExitsOneInTextMode() throws {
        let run = try featuregate(["tcf", "decode", "BO2e4qiO2e4qiB9ABADEDS-AAAAxKABgACBiQA"])
        #expect(run.status == 1)
        #expect(
            run.lines == [
                "error: TC string core segment 0, Version at bit 0: found 1 (a TCF v1 consent string), expected 2 (TCF v2)"
            ])
    }

    @Test func textModeListsFieldsOnePerLine() throws {
        let run = try featuregate(["tcf", "decode", "COtybn4PA_zT4KjACBENAPCIAEBAAECAAIAAAAAAAAAA"])
        #expect(run.status == 0)
        #expect(run.lines.contains("cmpId: 675"))
        #expect(run.lines.contains("purposeConsents: 2, 10"))
        #expect(run.lines.contains("disclosedVendors: (segment absent)"))
    }

    @Test(arguments: [
        ["tcf"], ["tcf", "decode"], ["tcf", "decode", "a", "b"], ["tcf", "decode", "--jsn", "x"], ["tcf", "encode"],
    ])
    func usageErrorsExitTwo(arguments: [String]) throws {
        let run = try featuregate(arguments)
        #expect(run.status == 2)
        #expect(run.output.isEmpty)
        #expect(!run.errorOutput.isEmpty)
    }

    @Test func theToolsOverviewListsTCFAndATypoSuggestsIt() throws {
        let help = try featuregate(["--help"])
        #expect(help.lines.contains { $0.hasPrefix("  tcf ") })
        let typo = try featuregate(["tcff"])
        #expect(typo.status == 2)
        #expect(typo.errorOutput.contains("did you mean 'tcf'?"))
    }

    @Test func helpExitsZero() throws {
        #expect(try featuregate(["tcf", "decode", "--help"]).status == 0)
        #expect(try featuregate(["tcf", "--help"]).status == 0)
        #expect(try featuregate(["help", "tcf"]).status == 0)
    }
}

#if os(macOS) || os(Linux)
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
        #expect(
            object["disclosedVendors"] as? [[Int]]
                == [[23, 23], [37, 37], [47, 48], [53, 53], [65, 65], [98, 98], [129, 129]])
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

    @Test func publisherRestrictionsAreObjectsWithPurposeTypeAndVendorRanges() throws {
        let core = BitWriter.core(restrictions: [
            RestrictionFields(purpose: 2, type: 1, vendors: [4...5, 9...9, 7...7]),
            RestrictionFields(purpose: 9, type: 2, vendors: []),
        ])
        let run = try featuregate(["tcf", "decode", "--json", core.base64URL])
        #expect(run.status == 0)
        let restrictions = try #require(try run.jsonObject()["publisherRestrictions"] as? [[String: Any]])
        #expect(restrictions.count == 2)
        #expect(restrictions[0]["purpose"] as? Int == 2)
        #expect(restrictions[0]["type"] as? String == "requireConsent")
        #expect(restrictions[0]["vendors"] as? [[Int]] == [[4, 5], [7, 7], [9, 9]])
        #expect(restrictions[1]["type"] as? String == "requireLegitimateInterest")
        #expect(restrictions[1]["vendors"] as? [[Int]] == [])
        let text = try featuregate(["tcf", "decode", core.base64URL])
        #expect(text.lines.contains("publisherRestriction: purpose 2 requireConsent for vendors 4-5, 7, 9"))
        #expect(text.lines.contains("publisherRestriction: purpose 9 requireLegitimateInterest for vendors none"))
    }

    @Test func aStringOfFourThousandRestrictionsOverEveryVendorPrintsRangesNotVendors() throws {
        // Issue 22: this 36 KB string once printed 1.56 GB of JSON; now the output grows with the string.
        let string = BitWriter.everyVendorRestrictedFourThousandTimes
        let run = try featuregate(["tcf", "decode", "--json", string])
        #expect(run.status == 0)
        #expect(run.output.utf8.count < 8 * string.utf8.count, "\(run.output.utf8.count) bytes of JSON")
        let restrictions = try #require(try run.jsonObject()["publisherRestrictions"] as? [[String: Any]])
        #expect(restrictions.count == 4095)
        #expect(restrictions.allSatisfy { $0["vendors"] as? [[Int]] == [[1, 65535]] })
        let text = try featuregate(["tcf", "decode", string])
        #expect(text.status == 0)
        #expect(text.output.utf8.count < 8 * string.utf8.count)
        #expect(text.lines.filter { $0.hasSuffix(" for vendors 1-65535") }.count == 4095)
    }

    @Test func anUndefinedRestrictionTypeDecodesWithAWarning() throws {
        let core = BitWriter.core(restrictions: [RestrictionFields(purpose: 3, type: 3, vendors: [10...12])])
        let run = try featuregate(["tcf", "decode", "--json", core.base64URL])
        #expect(run.status == 0)
        let object = try run.jsonObject()
        let restrictions = try #require(object["publisherRestrictions"] as? [[String: Any]])
        #expect(restrictions.first?["type"] as? String == "undefined")
        #expect(restrictions.first?["vendors"] as? [[Int]] == [[10, 12]])
        let diagnostics = try #require(object["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?["severity"] as? String == "warning")
        #expect(diagnostics.first?["segment"] as? String == "core")
        #expect(
            (diagnostics.first?["message"] as? String)?.hasPrefix("publisher restriction of type 3 (undefined)") == true
        )
    }

    @Test func isServiceSpecificZeroUnderPolicyVersionFourExitsOne() throws {
        var fields = CoreFields()
        fields.isServiceSpecific = false
        let run = try featuregate(["tcf", "decode", "--json", BitWriter.core(fields).base64URL])
        #expect(run.status == 1)
        let diagnostics = try #require(try run.jsonObject()["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.count == 1)
        #expect(diagnostics[0]["severity"] as? String == "error")
        #expect(diagnostics[0]["field"] as? String == "IsServiceSpecific")
        #expect(diagnostics[0]["bitOffset"] as? Int == 138)
        // Before TCF v2.2 the same bit decodes, with a warning.
        fields.policyVersion = 3
        let older = try featuregate(["tcf", "decode", BitWriter.core(fields).base64URL])
        #expect(older.status == 0)
        #expect(older.lines.contains { $0.hasPrefix("warning: IsServiceSpecific 0") })
    }

    @Test func legitimateInterestForConsentOnlyPurposesIsSaidToBeDecodedNotUsed() throws {
        var fields = CoreFields()
        fields.purposeLegitimateInterests = [2, 3]
        let run = try featuregate(["tcf", "decode", BitWriter.core(fields).base64URL])
        #expect(run.status == 0)
        #expect(run.lines.contains("purposeLegitimateInterests: 2, 3"))
        #expect(
            run.lines.contains(
                "warning: legitimate interest signalled for purpose 3, which TCF v2.2 allows only with consent; "
                    + "decoded, but never counted for consent"))
    }

    @Test func aStringStartingWithADashIsTheStringNotAnOption() throws {
        // Base64url allows '-' first; such a string says TCF version 62, so it is malformed, not a usage error.
        let run = try featuregate(["tcf", "decode", "--json", "-BQSbkAAAAAAA"])
        #expect(run.status == 1)
        let diagnostics = try #require(try run.jsonObject()["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.first?["field"] as? String == "Version")
        #expect((diagnostics.first?["message"] as? String)?.contains("found 62") == true)
        #expect(run.errorOutput.contains("'-BQSbkAAAAAAA' was read as the TC string"))
        let text = try featuregate(["tcf", "decode", "-BQSbk", "--json"])
        #expect(text.status == 1)
        #expect(text.output.hasPrefix("{"))
        // After '--' even an option's name is the string; before it, options still work.
        let dashes = try featuregate(["tcf", "decode", "--", "--json"])
        #expect(dashes.status == 1)
        #expect(dashes.lines.first?.hasPrefix("error: TC string core segment 0, Version at bit 0: found 62") == true)
        let valid = BitWriter.core().base64URL
        #expect(try featuregate(["tcf", "decode", "--json", "--", valid]).status == 0)
        let help = try featuregate(["tcf", "decode", "--help"])
        #expect(help.status == 0 && help.output.contains("featuregate tcf decode --json -- -BQSbk"))
    }

    @Test func aMistypedOptionBesideAStringIsAUsageErrorThatSuggestsTheOption() throws {
        let run = try featuregate(["tcf", "decode", "--jsn", BitWriter.core().base64URL])
        #expect(run.status == 2)
        #expect(run.errorOutput.contains("'--jsn' is not an option, did you mean '--json'?"))
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
#endif

import FeatureGateIAB
import Testing

/// The US Privacy and GPP decoders, against the strings in IABTechLab/iabgpp-java's tests (GppModelTest,
/// UsNatTest) and edge cases of their own.
@Suite struct USSignalDecoderTests {
    @Test func usPrivacyStringsDecode() throws {
        let string = try USPrivacyString("1YNN")
        #expect(string == USPrivacyString(noticeGiven: .yes, optedOutOfSale: .no, coveredByLSPA: .no))
        #expect(try USPrivacyString("1YYN").optedOutOfSale == .yes)
        #expect(try USPrivacyString("1---").optedOutOfSale == .notApplicable)
        #expect(try USPrivacyString("1yyn").description == "1YYN")
    }

    @Test(arguments: [
        ("", "length", 0), ("1YN", "length", 3), ("1YNNN", "length", 4), ("2YNN", "Version", 0),
        ("1XNN", "Notice", 1), ("1Y?N", "OptOutSale", 2), ("1YN0", "LSPACoveredTransaction", 3),
    ])
    func malformedUSPrivacyStringsNameTheField(string: String, field: String, offset: Int) {
        #expect {
            try USPrivacyString(string)
        } throws: { error in
            let error = error as! USPrivacyString.DecodingError
            return error.field == field && error.characterOffset == offset
        }
    }

    @Test(arguments: [
        ("DBABMA", [2]), ("DBABTA", [6]), ("DBABLA", [7]), ("DBACOeA", [2, 5, 6]), ("DBAA", []),
    ])
    func headerSectionIDs(header: String, ids: [Int]) throws {
        let sections = ids.map { id in
            id == 6 ? "1YNN" : id == 7 ? "BAAAAAAAAQA.QA" : "AAAA"
        }
        let gpp = try GPPString(([header] + sections).joined(separator: "~"))
        #expect(gpp.sectionIDs == ids)
        #expect(gpp.version == 1)
    }

    @Test func usNationalDidNotOptOut() throws {
        let gpp = try GPPString("DBABLA~BVQqAAAAAgA.QA")
        let usnat = try #require(gpp.usNational)
        #expect(usnat.version == 1)
        #expect(usnat.sharingNotice == 1 && usnat.saleOptOutNotice == 1 && usnat.sharingOptOutNotice == 1)
        #expect(usnat.targetedAdvertisingOptOutNotice == 1)
        #expect(usnat.saleOptOut == .didNotOptOut)
        #expect(usnat.sharingOptOut == .didNotOptOut)
        #expect(usnat.targetedAdvertisingOptOut == .didNotOptOut)
        #expect(usnat.globalPrivacyControl == false)
    }

    @Test func usNationalAllZeroDefaults() throws {
        let usnat = try #require(try GPPString("DBABLA~BAAAAAAAAQA.QA").usNational)
        #expect(usnat.saleOptOut == .notApplicable)
        #expect(usnat.sensitiveDataProcessing == Array(repeating: 0, count: 12))
        #expect(usnat.knownChildSensitiveDataConsents == [0, 0])
        #expect(usnat.mspaCoveredTransaction == 1)
    }

    @Test func usNationalEveryOptOut() throws {
        // iabgpp-java UsNatTest.testEncode2: every notice 1, every opt-out 1, MSPA modes 1, 1, 2, GPC on.
        let usnat = try GPPString.USNationalSection("BVVVkkkklWA.YA")
        #expect(usnat.saleOptOut == .optedOut && usnat.sharingOptOut == .optedOut)
        #expect(usnat.targetedAdvertisingOptOut == .optedOut)
        #expect(usnat.sensitiveDataProcessing == [2, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 0])
        #expect(usnat.knownChildSensitiveDataConsents == [2, 1])
        #expect(usnat.personalDataConsents == 1)
        #expect(usnat.mspaCoveredTransaction == 1 && usnat.mspaOptOutOptionMode == 1)
        #expect(usnat.mspaServiceProviderMode == 2)
        #expect(usnat.globalPrivacyControl == true)
    }

    @Test func usNationalVersionTwoHasSixteenSensitiveCategoriesAndThreeChildConsents() throws {
        // Version 2 ("C"), everything zero but MspaCoveredTransaction = 1: 6 + 18 + 32 + 6 + 2 + 2 bits, then it.
        let usnat = try GPPString.USNationalSection("CAAAAAAAAABA")
        #expect(usnat.version == 2)
        #expect(usnat.sensitiveDataProcessing.count == 16)
        #expect(usnat.knownChildSensitiveDataConsents.count == 3)
        #expect(usnat.mspaCoveredTransaction == 1)
        #expect(usnat.globalPrivacyControl == nil)
    }

    @Test func usPrivacySectionOfGPP() throws {
        let gpp = try GPPString("DBABTA~1YYN")
        #expect(gpp.usPrivacy?.optedOutOfSale == .yes)
    }

    @Test(arguments: [
        ("", "header", "base64url"),
        ("CBABLA~BAAAAAAAAQA.QA", "header", "Type"),
        ("DCABLA~BAAAAAAAAQA.QA", "header", "Version"),
        ("DBAB", "header", "SectionIds.IsARange"),
        ("DBABLA", "header", "SectionIds"),
        ("DBABLA~BAAAAAAAAQA.QA~1YNN", "header", "SectionIds"),
        ("DBABLA~BAA", "usnat", "SaleOptOut"),
        ("DBABLA~BAAAAAAAA", "usnat", "MspaCoveredTransaction"),
        ("DBABLA~DAAAAAAAAQA", "usnat", "Version"),
        ("DBABLA~BAA4AAAAAQA", "usnat", "SaleOptOut"),
        ("DBABLA~BAAAAAAAAQA.wA", "usnat.gpc", "SubsectionType"),
        ("DBABLA~BAAAAAAAAQA.", "usnat.gpc", "base64url"),
        ("DBABTA~1YXN", "uspv1", "OptOutSale"),
        ("DBABLA~BAAAAAAAAQA+QA", "usnat", "base64url"),
    ])
    func malformedGPPStringsNameSectionAndField(string: String, section: String, field: String) {
        #expect {
            try GPPString(string)
        } throws: { error in
            let error = error as! GPPString.DecodingError
            return error.section == section && error.field == field
        }
    }
}

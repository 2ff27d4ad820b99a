import FeatureGateIAB
import Foundation
import Testing

/// The decoder against the strings and expected values published with the IAB's reference decoders.
///
/// Where each vector comes from (the copies read on 2026-11-28; the store names the commit of each file but not its
/// date, so no commit date is recorded; "store lists" is the commit the store gives for that path):
///
/// - iabtcf-java, `iabtcf-decoder/src/test/java/com/iabtcf/decoder/TCStringV2Test.java` (store lists
///   112c268895c2b9d7ee6c26e4fa1a4c688a976bab): coreFieldsMatchTheReferenceDecoder,
///   bitFieldVendorConsentsAndLegitimateInterests (`testConstructConsentsFromBitFields`),
///   rangeEncodedVendorLegitimateInterests (`testCanParseRangeEncodedVendorLegitimateInterests`),
///   rangeEncodedVendorConsents (`testRange`), purposeConsentsOneAndTwo (`testPurposesConsent`), and the core bit
///   string of publisherRestrictionsFromTheReferenceBitString (`testPublisherRestrictions`; the three restriction
///   entries after it are encoded here from the TCF v2.2 consent string specification).
/// - iabtcf-java, `iabtcf-decoder/src/test/java/com/iabtcf/decoder/TCStringDecoderTest.java` (store lists
///   f447a70bb277d451971736df008f9027eb921121; not re-read for this list): anUnknownVersionByteIsRejected.
/// - iabtcf-es, `modules/core/test/TCString.test.ts` (store lists f23556947c4c238a99996795703ac01f07fac978):
///   disclosedAndAllowedVendorSegments ("successfully decodes a validly encoded TC string").
/// - iabtcf-es, `modules/core/test/ReportedIssues.test.ts` (store lists bd4e63a919a78eba3492824778ef7d31c96eeb78):
///   aVendorListedTwiceInARestrictionIsOneVendor (issue 201), aBitFieldShorterThanMaxVendorIdIsAnError (issue 142),
///   tcfVersionOneStringsAreRejectedAsUnsupported (issues 156 and 191).
/// - A Java decoder's `TCDecoderTest.testDecodeAllSegments` (the `TCModelDecoder` API; the store does not name its
///   repository): allFourSegmentsWithAPaddedPublisherTCSegment.
/// - IABTechLab/iabgpp-java, `iabgpp-encoder/src/test/java/com/iab/gpp/encoder/GppModelTest.java` (store lists
///   d43beda75a187446f0d1ccdaa3754e0b664cbb28; the same `DBABMA~…` strings are in iabgpp-es's
///   `modules/cmpapi/test/GppModel.test.ts`): vendorConsentsOfGPPTCFSections, cmpFieldsOfAGPPTCFSection.
/// - The documentation of GDPR::IAB::TCFv2 (CPAN): theDocumentedExampleOfAnotherDecoder.
/// - Encoded here from the TCF v2.2 consent string specification, not from a library: the publisher TC segment of
///   publisherPurposesAndCustomPurposes (after iabtcf-java's core string above).
@Suite struct TCStringVectorTests {
    private func date(_ text: String) -> Date { try! Date(text, strategy: .iso8601) }

    @Test func coreFieldsMatchTheReferenceDecoder() throws {
        let tc = try TCString("COtybn4PA_zT4KjACBENAPCIAEBAAECAAIAAAAAAAAAA")
        #expect(tc.version == 2)
        #expect(tc.created == date("2020-01-26T17:01:00Z"))
        #expect(tc.lastUpdated == date("2021-02-02T17:01:00Z"))
        #expect(tc.cmpID == 675)
        #expect(tc.cmpVersion == 2)
        #expect(tc.consentScreen == 1)
        #expect(tc.vendorListVersion == 15)
        #expect(tc.tcfPolicyVersion == 2)
        #expect(tc.consentLanguage == "EN")
        #expect(tc.publisherCountryCode == "AA")
        #expect(!tc.isServiceSpecific)
        #expect(tc.purposeOneTreatment)
        #expect(!tc.useNonStandardTexts)
        #expect(tc.specialFeatureOptIns.ids == [1])
        #expect(tc.purposeConsents.ids == [2, 10])
        #expect(tc.purposeLegitimateInterests.ids == [2, 9])
        #expect(tc.disclosedVendors == nil && tc.allowedVendors == nil && tc.publisherTC == nil)
    }

    @Test func bitFieldVendorConsentsAndLegitimateInterests() throws {
        let tc = try TCString(
            "COrEAV4OrXx94ACABBENAHCIAD-AAAAAAACAAxAAAAgAIAwgAgAAAAEAgQAAAAAEAYQAQAAAACAAAABAAA")
        #expect(tc.purposeConsents.ids == [3, 4, 5, 6, 7, 8, 9])
        #expect(tc.vendorConsents.ids == [23, 37, 47, 48, 53, 65, 98])
        #expect(tc.vendorLegitimateInterests.ids == [37, 47, 48, 53, 65, 98, 129])
    }

    @Test func disclosedAndAllowedVendorSegments() throws {
        let tc = try TCString(
            "COrEAV4OrXx94ACABBENAHCIAD-AAAAAAACAAxAAAAgAIAwgAgAAAAEAgQAAAAAEAYQAQAAAACAAAABAAA"
                + ".IBAgAAAgAIAwgAgAAAAEAAAACA.QAagAQAgAIAwgA")
        #expect(tc.allowedVendors?.ids == [12, 23, 37, 47, 48, 53])
        #expect(tc.disclosedVendors?.ids == [23, 37, 47, 48, 53, 65, 98, 129])
        #expect(tc.publisherTC == nil)
    }

    @Test func allFourSegmentsWithAPaddedPublisherTCSegment() throws {
        let tc = try TCString(
            "COrEAV4OrXx94ACABBENAHCIAD-AAAAAAACAAxAAAAgAIAwgAgAAAAEAgQAAAAAEAYQAQAAAACAAAABAAA"
                + ".IBAgAAAgAIAwgAgAAAAEAAAACA.QAagAQAgAIAwgA.cAAAAAAAITg=")
        #expect(tc.publisherTC?.purposeConsents.count == 1)
        #expect(tc.disclosedVendors != nil && tc.allowedVendors != nil)
    }

    @Test func rangeEncodedVendorLegitimateInterests() throws {
        let tc = try TCString("COv__-wOv__-wC2AAAENAPCgAAAAAAAAAAAAA_wAQA_gEBABAEAAAA")
        #expect(tc.vendorLegitimateInterests.ids == [128])
    }

    @Test func rangeEncodedVendorConsents() throws {
        let disclosed =
            ".IFoEUQQgAIQwgIwQABAEAAAAOIAACAIAAAAQAIAgEAACEAAAAAgAQBAAAAAAAGBAAgAAAAAAAFAAECAAAgAAQARAEQAAAAAJAAIAAg"
            + "AAAYQEAAAQmAgBC3ZAYzUw"
        let twoRanges = try TCString("COwBOpCOwBOpCLqAAAENAPCAAAAAAAAAAAAAFfwAYFfAV-BVkAGBVYFWAAA" + disclosed)
        #expect(twoRanges.vendorConsents.ids == [702, 703])
        let oneRange = try TCString("COwBOpCOwBOpCLqAAAENAPCAAAAAAAAAAAAAFfwAQFfgUbABAUaAAA" + disclosed)
        #expect(oneRange.vendorConsents.ids == [703])
        #expect(oneRange.disclosedVendors?.isEmpty == false)
    }

    @Test func purposeConsentsOneAndTwo() throws {
        let tc = try TCString("COwxsONOwxsONKpAAAENAdCAAMAAAAAAAAAAAAAAAAAA")
        #expect(tc.purposeConsents.contains(1) && tc.purposeConsents.contains(2))
    }

    @Test func publisherRestrictionsFromTheReferenceBitString() throws {
        let chunks = [
            "0000100011101011100", "1000000000000001010", "0000001110101110010", "0000000000000101000",
            "0000110011111000000", "0000000000000000100", "0011010000000011110", "0001000000000000000",
            "0000000000000000000", "0000000000000000000", "0000000000000000000", "0000000000000000000",
            "0000000000000000000", "000000000011",
        ]
        let restrictions = "000001" + "01" + "000000000000" + "000010" + "00" + "000000000000" + "000011" + "10"
        let bits = chunks.joined() + restrictions + "000000000000" + "0"
        let tc = try TCString(BitWriter.base64URL(BitWriter.bits(bits)))
        #expect(
            tc.publisherRestrictions == [
                TCString.PublisherRestriction(purpose: 1, type: .requireConsent, vendors: []),
                TCString.PublisherRestriction(purpose: 2, type: .notAllowed, vendors: []),
                TCString.PublisherRestriction(purpose: 3, type: .requireLegitimateInterest, vendors: []),
            ])
    }

    @Test func publisherPurposesAndCustomPurposes() throws {
        let segment = "011" + "100000000000000000000000" + "000000000000000000000001" + "000010" + "01" + "11" + "000"
        let tc = try TCString(
            "COtybn4PA_zT4KjACBENAPCIAEBAAECAAIAAAAAAAAAA." + BitWriter.base64URL(BitWriter.bits(segment)))
        #expect(tc.publisherTC?.purposeConsents.ids == [1])
        #expect(tc.publisherTC?.purposeLegitimateInterests.ids == [24])
        #expect(tc.publisherTC?.numberOfCustomPurposes == 2)
        #expect(tc.publisherTC?.customPurposeConsents.ids == [2])
        #expect(tc.publisherTC?.customPurposeLegitimateInterests.ids == [1, 2])
    }

    @Test func aVendorListedTwiceInARestrictionIsOneVendor() throws {
        // iabtcf-es issue 201: a restriction that encodes a vendor several times still decodes.
        let tc = try TCString(
            "CO4VGswO4VGswAfZCBDEAzCsAP_AAH_AAAigGUNf_X9fb2vj-_599_t0eY1f9_63t-wzjheMs-8NyZ-X_J4Wv2MyvB34JqQKGRgkunL"
                + "BAQdtHGncTQgBwIlViTLMY02MjzNKJrJEilsbe2dYGH9vn8XT_ZKZ70-_v__7v3___33_5Ayhr_6_r7e18f3_Pvv9ujzGr_v_W9v"
                + "2GccLxln3huTPy_5PC1-xmV4O_BNSBQyMEl05YICDto407iaEAOBEqsSZZjGmxkeZpRNZIkUtjb2zrAw_t8_i6f7JTPen39___d-_"
                + "__--__ICgKAOAAcAA4AFAAjgB6AEYALcGACAW0AtoJAHAAOAAcACgARwA9ACMAFuFABALaAW0GgDgAHAAOABQAI4AegBGAC3DgAg"
                + "FtALaEQBwADgAHAAoAEcAPQAjABbiQAQC2gFtCoA4ABwADgAUACOAHoARgAtxYAIBbQC2hkAcAA4ABwAKABHAD0AIwAW40AEAtoB"
                + "bQ6AOAAcAA4AFAAjgB6AEYALceACAW0AtohAHAAOAAcACgARwA9ACMAFuRABALaAW0SgDgAHAAOABQAI4AegBGAC3JgAgFtALaKQ"
                + "BwADgAHAAoAEcAPQAjABblQAQC2gFtA")
        let requireConsentForPurposeOne = tc.publisherRestrictions.filter {
            $0.purpose == 1 && $0.type == .requireConsent
        }
        #expect(TCString.IDSet(requireConsentForPurposeOne.flatMap(\.vendors)).ids == [7, 20, 71, 122, 140, 183])
    }

    @Test func aBitFieldShorterThanMaxVendorIdIsAnError() {
        // iabtcf-es issue 142.
        let string =
            "CLSYjTaOngnCIAOABBENAXCMAGOAABBAAA7IA5n-m7fP6_3fbqVv6E__PoA5Aqff3aJx8tv_1967rfnQEQoAIAAQCrwkAEABAcACAB"
            + "IMACAAuApEVABABUSABgBCAVSAtIoACACIArYQAHACgAFgAVwBJgDcAI7AWgMAAgBiKgAgBMgFfKQAQBRkQAQA4AFiBAAoA-AEVAJ"
            + "lAVgAtYcACAJcAr4eABAK8OgBgFzAOmAqwgABAWyA.IFukWSQh"
        #expect(throws: TCString.DecodingError.self) { try TCString(string) }
    }

    @Test(arguments: [
        "BOhwdphOxFC7tAHABBFRC--AAAAuhr_7__7-_9_-_f__9uj3Or_v_f__32ccL59v_h_7v-_7fi_20nV4u_1vft9yfk1-5ctDztp507iak"
            + "ivXmqdeb9v_nz3_5pxP78k89r7337Ew_v8_v-b7BCON_YxEiA",
        "BO2e4qiO2e4qiB9ABADEDS-AAAAxKABgACBiQA",
        "Bg",
    ])
    func tcfVersionOneStringsAreRejectedAsUnsupported(string: String) {
        #expect {
            try TCString(string)
        } throws: { error in
            let error = error as! TCString.DecodingError
            return error.kind == .unsupportedVersion && error.segment == .core && error.field == "Version"
                && error.bitOffset == 0 && error.found.hasPrefix("1")
        }
    }

    @Test func anUnknownVersionByteIsRejected() {
        // iabtcf-java: a single byte 13 (base64url "DQ==") is an unsupported version (3).
        #expect {
            try TCString("DQ==")
        } throws: { error in
            (error as! TCString.DecodingError).kind == .unsupportedVersion
                && (error as! TCString.DecodingError).found == "3"
        }
    }

    @Test(arguments: [
        ("CPSG_8APSG_8AAAAAAENAACAAAAAAAAAAAAAAOAAAABAAAAA.QAAA.IAAA", [28]),
        ("CPSG_8APSG_8AAAAAAENAACAAAAAAAAAAAAAAOwAQAOgAAAA.QAAA.IAAA", [29]),
        ("CPSG_8APSG_8AAAAAAENAACAAAAAAAAAAAAAFpQAwAAgCtAWkAAAAAAA.QAAA.IAAA", [1, 173, 722]),
    ])
    func vendorConsentsOfGPPTCFSections(string: String, vendors: [Int]) throws {
        let tc = try TCString(string)
        #expect(tc.vendorConsents.ids == vendors)
        #expect(tc.allowedVendors == [])
        #expect(tc.disclosedVendors == [])
    }

    @Test func theDocumentedExampleOfAnotherDecoder() throws {
        // GDPR::IAB::TCFv2 (CPAN) documents this string's fields: created at epoch 1228644257, updated at
        // 1326215413, CMP 21 version 7, screen 2, English, vendor list 23, purposes 1, 3, 9 and 10.
        let tc = try TCString(
            "CLcVDxRMWfGmWAVAHCENAXCkAKDAADnAABRgA5mdfCKZuYJez-NQm0TBMYA4oCAAGQYIAAAAAAEAIAEgAA.argAC0gAAAAAAAAAAAA")
        #expect(Int(tc.created.timeIntervalSince1970) == 1_228_644_257)
        #expect(Int(tc.lastUpdated.timeIntervalSince1970) == 1_326_215_413)
        #expect(tc.cmpID == 21 && tc.cmpVersion == 7 && tc.consentScreen == 2)
        #expect(tc.consentLanguage == "EN" && tc.vendorListVersion == 23)
        #expect(tc.purposeConsents.ids == [1, 3, 9, 10])
        #expect(tc.publisherTC != nil)
    }

    @Test func cmpFieldsOfAGPPTCFSection() throws {
        let tc = try TCString("CPSG_8APSG_8ANwAAAENAwCAAAAAAAAAAAAAAAAAAAAA.QAAA.IAAA")
        #expect(tc.cmpID == 880)
        #expect(tc.cmpVersion == 0)
        #expect(tc.consentScreen == 0)
        #expect(tc.consentLanguage == "EN")
        #expect(tc.vendorListVersion == 48)
        #expect(tc.tcfPolicyVersion == 2)
        #expect(tc.publisherCountryCode == "AA")
        #expect(!tc.isServiceSpecific && !tc.useNonStandardTexts && !tc.purposeOneTreatment)
    }
}

import FeatureGateIAB
import Foundation
import Testing

/// Edge cases of the TC string decoder, on strings built field by field: both vendor encodings, every optional
/// segment, truncation at every character, padding, versions, and each kind of invalid value.
@Suite struct TCStringDecoderTests {
    /// A full string: core with bit-field consents and range-encoded legitimate interests, one restriction, and
    /// every optional segment. Returns the core writer too, for truncation tests.
    private func fullString() -> (string: String, core: BitWriter) {
        var core = BitWriter()
        CoreFields().write(to: &core)
        core.appendVendorBitField([2, 5, 64, 65], maximum: 70, prefix: "VendorConsents.")
        core.appendVendorRanges([3...3, 10...12, 600...601], maximum: 601, prefix: "VendorLegitimateInterests.")
        core.append(1, 12, "PubRestrictions.NumPubRestrictions")
        core.append(7, 6, "PubRestrictions.PurposeId")
        core.append(0, 2, "PubRestrictions.RestrictionType")
        core.appendVendorRanges([5...6], maximum: nil, prefix: "PubRestrictions.")
        var disclosed = BitWriter()
        disclosed.append(1, 3, "SegmentType")
        disclosed.appendVendorRanges([1...4, 9...9], maximum: 9, prefix: "")
        var allowed = BitWriter()
        allowed.append(2, 3, "SegmentType")
        allowed.appendVendorBitField([3], maximum: 3, prefix: "")
        var publisher = BitWriter()
        publisher.append(3, 3, "SegmentType")
        publisher.appendBitField([1, 8], 24, "PubPurposesConsent")
        publisher.appendBitField([10], 24, "PubPurposesLITransparency")
        publisher.append(3, 6, "NumCustomPurposes")
        publisher.appendBitField([1, 3], 3, "CustomPurposesConsent")
        publisher.appendBitField([2], 3, "CustomPurposesLITransparency")
        let string = [core, disclosed, allowed, publisher].map(\.base64URL).joined(separator: ".")
        return (string, core)
    }

    private func decodingError(_ string: String) -> TCString.DecodingError? {
        do {
            _ = try TCString(string)
            return nil
        } catch {
            return error
        }
    }

    @Test func everyFieldOfEverySegmentDecodes() throws {
        let tc = try TCString(fullString().string)
        #expect(tc.version == 2)
        #expect(tc.created == Date(timeIntervalSince1970: 1_510_082_155.4))
        #expect(tc.lastUpdated == tc.created)
        #expect(tc.cmpID == 7 && tc.cmpVersion == 1 && tc.consentScreen == 3)
        #expect(tc.consentLanguage == "EN" && tc.publisherCountryCode == "DE")
        #expect(tc.vendorListVersion == 150 && tc.tcfPolicyVersion == 4)
        #expect(tc.isServiceSpecific && !tc.useNonStandardTexts && !tc.purposeOneTreatment)
        #expect(tc.specialFeatureOptIns.ids == [1])
        #expect(tc.purposeConsents.ids == [1, 3, 4, 7, 8])
        #expect(tc.purposeLegitimateInterests.ids == [2, 9, 10])
        #expect(tc.vendorConsents.ids == [2, 5, 64, 65])
        #expect(tc.vendorLegitimateInterests.ids == [3, 10, 11, 12, 600, 601])
        #expect(
            tc.publisherRestrictions == [TCString.PublisherRestriction(purpose: 7, type: .notAllowed, vendors: [5, 6])])
        #expect(tc.disclosedVendors?.ids == [1, 2, 3, 4, 9])
        #expect(tc.allowedVendors?.ids == [3])
        #expect(
            tc.publisherTC
                == TCString.PublisherTC(
                    purposeConsents: [1, 8], purposeLegitimateInterests: [10], numberOfCustomPurposes: 3,
                    customPurposeConsents: [1, 3], customPurposeLegitimateInterests: [2]))
    }

    @Test func optionalSegmentsMayComeInAnyOrderAndEachAlone() throws {
        let parts = fullString().string.split(separator: ".").map(String.init)
        for subset in [[3], [1], [2], [3, 1], [2, 3, 1]] {
            let tc = try TCString(([parts[0]] + subset.map { parts[$0] }).joined(separator: "."))
            #expect((tc.disclosedVendors != nil) == subset.contains(1))
            #expect((tc.allowedVendors != nil) == subset.contains(2))
            #expect((tc.publisherTC != nil) == subset.contains(3))
        }
    }

    @Test func truncationAtEveryCharacterOfTheCoreNamesTheFieldAndItsOffset() throws {
        let (_, core) = fullString()
        let string = core.base64URL
        let fieldBits = core.bits.count
        for length in 1..<((fieldBits + 5) / 6) {
            let prefix = String(string.prefix(length))
            let error = try #require(decodingError(prefix), "\(length) characters decoded")
            let available = length * 6
            let field = try #require(core.fields.first { $0.offset + $0.width > available })
            #expect(error.kind == .truncated, "\(length) characters: \(error)")
            #expect(error.segment == .core)
            #expect(error.field == field.name, "\(length) characters: \(error)")
            // A field read in parts (the language's two letters) reports where its last read began.
            #expect(error.bitOffset <= available && error.bitOffset >= field.offset, "\(length): \(error)")
        }
    }

    @Test func truncationAtEveryCharacterOfAnOptionalSegment() throws {
        let parts = fullString().string.split(separator: ".").map(String.init)
        let kinds: [TCString.DecodingError.Segment] = [.core, .disclosedVendors, .allowedVendors, .publisherTC]
        for index in 1...3 {
            for length in 1..<parts[index].count {
                var cut = parts
                cut[index] = String(parts[index].prefix(length))
                let error = try #require(decodingError(cut.joined(separator: ".")), "segment \(index) at \(length)")
                #expect(error.kind == .truncated)
                #expect(error.segmentIndex == index)
                #expect(error.segment == kinds[index] || (length == 0 && error.segment == .string))
            }
        }
    }

    @Test func paddingIsOptionalButMustCompleteAGroupOfFour() throws {
        let plain = fullString().string
        let padded = plain.split(separator: ".").map { part -> String in
            String(part) + String(repeating: "=", count: (4 - part.count % 4) % 4)
        }.joined(separator: ".")
        #expect(padded != plain)
        #expect(try TCString(padded) == TCString(plain))
        let core = String(plain.split(separator: ".")[0])
        let short = core + String(repeating: "=", count: (4 - core.count % 4) % 4 + 1)
        #expect(decodingError(short)?.kind == .invalidCharacter)
        #expect(decodingError(core + "===")?.kind == .invalidCharacter)
        #expect(decodingError("=" + core)?.kind == .invalidCharacter)
    }

    @Test(arguments: [0, 1, 3, 63])
    func versionsOtherThanTwoAreUnsupported(version: Int) throws {
        var fields = CoreFields()
        fields.version = version
        var writer = BitWriter()
        fields.write(to: &writer)
        writer.appendVendorBitField([], maximum: 0, prefix: "")
        writer.appendVendorBitField([], maximum: 0, prefix: "")
        writer.append(0, 12, "")
        let error = try #require(decodingError(writer.base64URL))
        #expect(error.kind == .unsupportedVersion)
        #expect(error.found.hasPrefix("\(version)"))
        #expect(error.expected == "2 (TCF v2)")
    }

    @Test(arguments: ["+", "/", " ", "é", "*"])
    func charactersOutsideBase64URLAreRejectedWithTheirOffset(character: String) throws {
        let string = fullString().string
        let broken = String(string.prefix(10)) + character + String(string.dropFirst(11))
        let error = try #require(decodingError(broken))
        #expect(error.kind == .invalidCharacter)
        #expect(error.bitOffset == 60)
        #expect(error.segment == .core)
    }

    @Test func anEmptyStringAndEmptySegmentsAreErrors() {
        let string = fullString().string
        #expect(decodingError("")?.kind == .empty)
        #expect(decodingError(string + ".")?.kind == .empty)
        #expect(decodingError(string.replacingOccurrences(of: ".", with: ".."))?.kind == .empty)
    }

    @Test(arguments: [0, 4, 7])
    func unknownSegmentTypesAreErrors(type: Int) throws {
        var segment = BitWriter()
        segment.append(type, 3, "SegmentType")
        segment.append(0, 17, "")
        let core = String(fullString().string.split(separator: ".")[0])
        let error = try #require(decodingError(core + "." + segment.base64URL))
        #expect(error.kind == .invalidSegment && error.field == "SegmentType" && error.segmentIndex == 1)
    }

    @Test func aSegmentGivenTwiceIsAnError() throws {
        let parts = fullString().string.split(separator: ".").map(String.init)
        let error = try #require(decodingError([parts[0], parts[3], parts[1], parts[3]].joined(separator: ".")))
        #expect(error.kind == .invalidSegment && error.segmentIndex == 3)
    }

    /// A core segment whose vendor-consent section is `section`, followed by empty LI and restrictions.
    private func coreWithVendorConsents(_ section: (inout BitWriter) -> Void) -> String {
        var writer = BitWriter()
        CoreFields().write(to: &writer)
        section(&writer)
        writer.appendVendorBitField([], maximum: 0, prefix: "")
        writer.append(0, 12, "")
        return writer.base64URL
    }

    @Test func rangeEntriesOutsideOneToMaxVendorIdAreErrors() throws {
        let cases: [(ranges: [ClosedRange<Int>], maximum: Int, field: String)] = [
            ([0...0], 10, "VendorConsents.StartOrOnlyVendorId"),
            ([11...11], 10, "VendorConsents.StartOrOnlyVendorId"),
            ([4...11], 10, "VendorConsents.EndVendorId"),
            ([1...1], 0, "VendorConsents.StartOrOnlyVendorId"),
        ]
        for (ranges, maximum, field) in cases {
            let string = coreWithVendorConsents { $0.appendVendorRanges(ranges, maximum: maximum, prefix: "V.") }
            let error = try #require(decodingError(string))
            #expect(error.kind == .invalidValue && error.field == field, "\(ranges) max \(maximum): \(error)")
            #expect(error.bitOffset > 213)
        }
    }

    @Test func aRangeThatEndsBeforeItStartsIsAnError() throws {
        var writer = BitWriter()
        CoreFields().write(to: &writer)
        writer.append(20, 16, "")
        writer.append(1, 1, "")
        writer.append(1, 12, "")
        writer.append(1, 1, "")
        writer.append(9, 16, "")
        writer.append(8, 16, "")
        writer.appendVendorBitField([], maximum: 0, prefix: "")
        writer.append(0, 12, "")
        let error = try #require(decodingError(writer.base64URL))
        #expect(error.field == "VendorConsents.EndVendorId" && error.found == "8")
    }

    @Test func aLargeRangeDecodesAsEveryVendorInIt() throws {
        let string = coreWithVendorConsents { $0.appendVendorRanges([1...65535], maximum: 65535, prefix: "") }
        let tc = try TCString(string)
        #expect(tc.vendorConsents.count == 65535)
        #expect(tc.vendorConsents.contains(1) && tc.vendorConsents.contains(65535) && !tc.vendorConsents.contains(0))
    }

    @Test func purposeZeroInARestrictionIsAnError() throws {
        let string = BitWriter.core(restrictions: [RestrictionFields(purpose: 0, type: 1, vendors: [])]).base64URL
        let error = try #require(decodingError(string))
        #expect(error.kind == .invalidValue && error.field == "PubRestrictions.PurposeId")
    }

    @Test func restrictionTypeThreeKeepsTheRestOfTheStringWithAWarning() throws {
        // Seven strings of an ad server's test suite carry type 3, which the specification leaves undefined.
        let core = BitWriter.core(
            vendorConsents: [4, 9],
            restrictions: [
                RestrictionFields(purpose: 2, type: 3, vendors: [4...5]),
                RestrictionFields(purpose: 7, type: 0, vendors: [9...9]),
                RestrictionFields(purpose: 10, type: 3, vendors: [1...3]),
            ])
        var publisher = BitWriter()
        publisher.append(3, 3, "SegmentType")
        publisher.appendBitField([1, 8], 24, "PubPurposesConsent")
        publisher.appendBitField([], 24, "PubPurposesLITransparency")
        publisher.append(0, 6, "NumCustomPurposes")
        let tc = try TCString(core.base64URL + "." + publisher.base64URL)
        #expect(
            tc.publisherRestrictions == [
                TCString.PublisherRestriction(purpose: 2, type: .undefined, vendors: [4, 5]),
                TCString.PublisherRestriction(purpose: 7, type: .notAllowed, vendors: [9]),
                TCString.PublisherRestriction(purpose: 10, type: .undefined, vendors: [1, 2, 3]),
            ])
        #expect(tc.vendorConsents.ids == [4, 9])
        #expect(tc.purposeConsents.ids == [1, 3, 4, 7, 8])
        #expect(tc.publisherTC?.purposeConsents.ids == [1, 8])
        #expect(tc.warnings == [.undefinedRestrictionType(purposes: [2, 10])])
        #expect(tc.warnings.first?.segment == .core)
        #expect(
            tc.warnings.first?.description
                == "publisher restriction of type 3 (undefined) for purposes 2, 10; its vendors are treated as not "
                + "allowed for them")
    }

    @Test(arguments: [4, 5, 63])
    func isServiceSpecificZeroFromPolicyVersionFourIsAnError(policyVersion: Int) throws {
        var fields = CoreFields()
        fields.policyVersion = policyVersion
        fields.isServiceSpecific = false
        let error = try #require(decodingError(BitWriter.core(fields).base64URL))
        #expect(error.kind == .invalidValue && error.segment == .core && error.field == "IsServiceSpecific")
        // Version 6, two dates 36, CMP ID and version 12 each, screen 6, language 12, list 12, policy 6.
        #expect(error.bitOffset == 138)
        #expect(error.found == "0 under TcfPolicyVersion \(policyVersion)")
    }

    @Test(arguments: [0, 2, 3])
    func isServiceSpecificZeroBeforePolicyVersionFourDecodesWithAWarning(policyVersion: Int) throws {
        var fields = CoreFields()
        fields.policyVersion = policyVersion
        fields.isServiceSpecific = false
        fields.purposeLegitimateInterests = []
        let tc = try TCString(BitWriter.core(fields).base64URL)
        #expect(!tc.isServiceSpecific)
        #expect(tc.warnings == [.olderPolicyVersion(policyVersion), .notServiceSpecific])
        fields.isServiceSpecific = true
        #expect(try TCString(BitWriter.core(fields).base64URL).warnings == [.olderPolicyVersion(policyVersion)])
    }

    @Test func fourThousandRestrictionsOverEveryVendorStayRanges() throws {
        let string = BitWriter.everyVendorRestrictedFourThousandTimes
        #expect((36_000...36_500).contains(string.utf8.count))
        let tc = try TCString(string)
        #expect(tc.publisherRestrictions.count == 4095)
        #expect(tc.publisherRestrictions.allSatisfy { $0.vendors.ranges == [1...65535] })
        let last = try #require(tc.publisherRestrictions.last)
        #expect(last.purpose == 4094 % 24 + 1 && last.type == .requireLegitimateInterest)
        #expect(last.vendors.count == 65535 && last.vendors.contains(65535) && !last.vendors.contains(65536))
    }

    @Test func aRestrictionsEntriesAreMergedIntoAscendingRanges() throws {
        let entries: [ClosedRange<Int>] = [10...20, 1...5, 6...9, 15...30, 40...40, 40...40, 42...42]
        let string = BitWriter.core(restrictions: [RestrictionFields(purpose: 1, type: 0, vendors: entries)])
        let tc = try TCString(string.base64URL)
        #expect(tc.publisherRestrictions.first?.vendors.ranges == [1...30, 40...40, 42...42])
    }

    @Test func aLanguageCodeOutsideAToZIsAnError() throws {
        var fields = CoreFields()
        fields.language = (4, 26)
        var writer = BitWriter()
        fields.write(to: &writer)
        let error = try #require(decodingError(writer.base64URL))
        #expect(error.field == "ConsentLanguage" && error.kind == .invalidValue && error.bitOffset == 108)
    }

    @Test func errorsDescribeThemselvesInOneLine() throws {
        let error = try #require(decodingError("Bg"))
        #expect(
            error.description
                == "TC string core segment 0, Version at bit 0: found 1 (a TCF v1 consent string), expected 2 (TCF v2)")
    }
}

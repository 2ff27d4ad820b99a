import Foundation

/// Decodes TC strings into ``TCString``, field by field, as the IAB Tech Lab's "Consent string and vendor list
/// formats" (TCF v2) lays them out.
enum TCStringDecoder {
    /// Decodes `string`; with `enforcingDisclosedVendors`, a string created on or after
    /// ``TCString/disclosedVendorsRequiredSince`` without a disclosed-vendors segment throws (TCF v2.3).
    static func decode(
        _ string: String, enforcingDisclosedVendors: Bool = true
    ) throws(TCString.DecodingError) -> TCString {
        guard !string.isEmpty else {
            throw TCString.DecodingError(
                kind: .empty, segment: .string, segmentIndex: 0, field: "TCString", bitOffset: 0,
                found: "an empty string", expected: "a core segment")
        }
        // Split bytes, not Characters: grapheme breaking cost more than the whole decode.
        let bytes = Array(string.utf8)
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        var core = try SegmentReader(parts[0], segment: .core, index: 0)
        var result = try decodeCore(&core)
        var seen: Set<Int> = []
        for (index, part) in parts.enumerated().dropFirst() {
            guard !part.isEmpty else {
                throw TCString.DecodingError(
                    kind: .empty, segment: .string, segmentIndex: index, field: "Segment", bitOffset: 0,
                    found: "an empty segment", expected: "a segment between the dots")
            }
            var reader = try SegmentReader(part, segment: .string, index: index)
            let typeOffset = reader.offset
            let type = try reader.int(3, "SegmentType")
            guard (1...3).contains(type), seen.insert(type).inserted else {
                throw TCString.DecodingError(
                    kind: .invalidSegment, segment: .string, segmentIndex: index, field: "SegmentType",
                    bitOffset: typeOffset, found: seen.contains(type) ? "segment type \(type) again" : "\(type)",
                    expected: "1 (disclosed vendors), 2 (allowed vendors) or 3 (publisher TC), each at most once")
            }
            switch type {
            case 1:
                reader.segment = .disclosedVendors
                result.disclosedVendors = try reader.vendorSet("")
            case 2:
                reader.segment = .allowedVendors
                result.allowedVendors = try reader.vendorSet("")
            default:
                reader.segment = .publisherTC
                result.publisherTC = try decodePublisherTC(&reader)
            }
        }
        if enforcingDisclosedVendors, let violation = result.disclosedVendorsViolation(segmentCount: parts.count) {
            throw violation
        }
        return result
    }

    private static func decodeCore(_ reader: inout SegmentReader) throws(TCString.DecodingError) -> TCString {
        let versionOffset = reader.offset
        let version = try reader.int(6, "Version")
        guard version == 2 else {
            throw TCString.DecodingError(
                kind: .unsupportedVersion, segment: .core, segmentIndex: 0, field: "Version",
                bitOffset: versionOffset, found: "\(version)" + (version == 1 ? " (a TCF v1 consent string)" : ""),
                expected: "2 (TCF v2)")
        }
        let created = try reader.date("Created")
        let lastUpdated = try reader.date("LastUpdated")
        let cmpID = try reader.int(12, "CmpId")
        let cmpVersion = try reader.int(12, "CmpVersion")
        let consentScreen = try reader.int(6, "ConsentScreen")
        let consentLanguage = try reader.letters("ConsentLanguage")
        let vendorListVersion = try reader.int(12, "VendorListVersion")
        let tcfPolicyVersion = try reader.int(6, "TcfPolicyVersion")
        let serviceSpecificOffset = reader.offset
        let isServiceSpecific = try reader.bool("IsServiceSpecific")
        // TCF v2.2 dropped global consent: such a string is invalid, so the CMP's answer is unknown. Older policy
        // versions allowed it; they decode, with a warning.
        guard isServiceSpecific || tcfPolicyVersion < 4 else {
            throw reader.invalid(
                "IsServiceSpecific", at: serviceSpecificOffset, found: "0 under TcfPolicyVersion \(tcfPolicyVersion)",
                "1: from TCF policy version 4 (v2.2) on, consent is always service-specific")
        }
        let useNonStandardTexts = try reader.bool("UseNonStandardTexts")
        let specialFeatureOptIns = try reader.bitField(12, "SpecialFeatureOptIns")
        let purposeConsents = try reader.bitField(24, "PurposesConsent")
        let purposeLegitimateInterests = try reader.bitField(24, "PurposesLITransparency")
        let purposeOneTreatment = try reader.bool("PurposeOneTreatment")
        let publisherCountryCode = try reader.letters("PublisherCC")
        let vendorConsents = try reader.vendorSet("VendorConsents.")
        let vendorLegitimateInterests = try reader.vendorSet("VendorLegitimateInterests.")
        let restrictions = try decodeRestrictions(&reader)
        return TCString(
            version: version, created: created, lastUpdated: lastUpdated, cmpID: cmpID, cmpVersion: cmpVersion,
            consentScreen: consentScreen, consentLanguage: consentLanguage, vendorListVersion: vendorListVersion,
            tcfPolicyVersion: tcfPolicyVersion, isServiceSpecific: isServiceSpecific,
            useNonStandardTexts: useNonStandardTexts, specialFeatureOptIns: specialFeatureOptIns,
            purposeConsents: purposeConsents, purposeLegitimateInterests: purposeLegitimateInterests,
            purposeOneTreatment: purposeOneTreatment, publisherCountryCode: publisherCountryCode,
            vendorConsents: vendorConsents, vendorLegitimateInterests: vendorLegitimateInterests,
            publisherRestrictions: restrictions)
    }

    private static func decodeRestrictions(
        _ reader: inout SegmentReader
    ) throws(TCString.DecodingError) -> [TCString.PublisherRestriction] {
        let count = try reader.int(12, "PubRestrictions.NumPubRestrictions")
        var restrictions: [TCString.PublisherRestriction] = []
        for _ in 0..<count {
            let purposeOffset = reader.offset
            let purpose = try reader.int(6, "PubRestrictions.PurposeId")
            guard (1...24).contains(purpose) else {
                throw reader.invalid("PubRestrictions.PurposeId", at: purposeOffset, found: "\(purpose)", "1...24")
            }
            let type: TCString.PublisherRestriction.RestrictionType
            switch try reader.int(2, "PubRestrictions.RestrictionType") {
            case 0: type = .notAllowed
            case 1: type = .requireConsent
            case 2: type = .requireLegitimateInterest
            // Type 3 is undefined: rejecting the string would lose every answer in it, so it decodes (with a
            // warning) and readers treat it as the most restrictive type.
            default: type = .undefined
            }
            // Kept as ranges: one entry can cover 65,535 vendors in 33 bits, and a string thousands of entries.
            var ranges: [ClosedRange<Int>] = []
            try reader.forEachRange("PubRestrictions.", maximum: nil) { ranges.append($0) }
            let vendors = TCString.IDRanges(normalizing: consume ranges)
            restrictions.append(TCString.PublisherRestriction(purpose: purpose, type: type, vendors: vendors))
        }
        return restrictions
    }

    private static func decodePublisherTC(
        _ reader: inout SegmentReader
    ) throws(TCString.DecodingError) -> TCString.PublisherTC {
        let consents = try reader.bitField(24, "PubPurposesConsent")
        let legitimateInterests = try reader.bitField(24, "PubPurposesLITransparency")
        let customCount = try reader.int(6, "NumCustomPurposes")
        let customConsents = try reader.bitField(customCount, "CustomPurposesConsent")
        let customLegitimateInterests = try reader.bitField(customCount, "CustomPurposesLITransparency")
        return TCString.PublisherTC(
            purposeConsents: consents, purposeLegitimateInterests: legitimateInterests,
            numberOfCustomPurposes: customCount, customPurposeConsents: customConsents,
            customPurposeLegitimateInterests: customLegitimateInterests)
    }
}

/// A ``BitReader`` that knows which segment it reads, so each failure becomes a ``TCString/DecodingError``.
private struct SegmentReader {
    var bits: BitReader
    var segment: TCString.DecodingError.Segment
    let index: Int

    var offset: Int { bits.offset }

    init(_ text: ArraySlice<UInt8>, segment: TCString.DecodingError.Segment, index: Int) throws(TCString.DecodingError)
    {
        switch BitReader.decode(text) {
        case .success(let bits):
            self.bits = bits
        case .failure(let failure):
            let character = String(decoding: [failure.byte], as: UTF8.self)
            throw TCString.DecodingError(
                kind: .invalidCharacter, segment: segment, segmentIndex: index, field: "base64url",
                bitOffset: failure.characterOffset * 6,
                found: failure.byte < 0x20 || failure.byte >= 0x7F
                    ? "byte 0x\(String(failure.byte, radix: 16))"
                    : "\"\(character)\" at character \(failure.characterOffset)",
                expected: BitReader.alphabet)
        }
        self.segment = segment
        self.index = index
    }

    // Field names are autoclosures: "VendorConsents." + "IsARange" built for every range entry would allocate on the
    // hot path; it is built only when an error is.
    func truncated(_ field: @autoclosure () -> String, needing count: Int) -> TCString.DecodingError {
        TCString.DecodingError(
            kind: .truncated, segment: segment, segmentIndex: index, field: field(), bitOffset: bits.offset,
            found: "\(bits.bitCount - bits.offset) bit\(bits.bitCount - bits.offset == 1 ? "" : "s") left",
            expected: "\(count) bit\(count == 1 ? "" : "s")")
    }

    func invalid(_ field: String, at offset: Int, found: String, _ expected: String) -> TCString.DecodingError {
        TCString.DecodingError(
            kind: .invalidValue, segment: segment, segmentIndex: index, field: field, bitOffset: offset,
            found: found, expected: expected)
    }

    mutating func int(_ count: Int, _ field: @autoclosure () -> String) throws(TCString.DecodingError) -> Int {
        guard let value = bits.read(count) else { throw truncated(field(), needing: count) }
        return value
    }

    mutating func bool(_ field: @autoclosure () -> String) throws(TCString.DecodingError) -> Bool {
        try int(1, field()) == 1
    }

    mutating func date(_ field: String) throws(TCString.DecodingError) -> Date {
        let deciseconds = try int(36, field)
        return Date(timeIntervalSince1970: Double(deciseconds) / 10)
    }

    /// Two letters, six bits each, 0 = A.
    mutating func letters(_ field: String) throws(TCString.DecodingError) -> String {
        let start = offset
        let first = try int(6, field)
        let second = try int(6, field)
        guard first < 26, second < 26 else {
            throw invalid(field, at: start, found: "letter codes \(first), \(second)", "two letters A-Z (0...25)")
        }
        return String(decoding: [UInt8(65 + first), UInt8(65 + second)], as: UTF8.self)
    }

    mutating func bitField(
        _ count: Int, _ field: @autoclosure () -> String
    ) throws(TCString.DecodingError) -> TCString.IDSet {
        guard let set = bits.readBitField(count) else { throw truncated(field(), needing: count) }
        return set
    }

    /// A vendor section: `MaxVendorId`, `IsRangeEncoding`, then a bit field or range entries.
    mutating func vendorSet(_ prefix: String) throws(TCString.DecodingError) -> TCString.IDSet {
        let maximum = try int(16, prefix + "MaxVendorId")
        if try bool(prefix + "IsRangeEncoding") {
            // At most `maximum` (65,535) IDs: a bit vector of at most 8 KB, whatever the entries.
            var set = TCString.IDSet(reservingCapacityFor: maximum)
            try forEachRange(prefix, maximum: maximum) { set.insert($0) }
            return set
        }
        return try bitField(maximum, prefix + "BitField")
    }

    /// Reads `NumEntries`, then that many single IDs or ranges, handing each to `body` as a range; IDs are
    /// 1...`maximum` (1...65535 without one).
    mutating func forEachRange(
        _ prefix: String, maximum: Int?, _ body: (ClosedRange<Int>) -> Void
    ) throws(TCString.DecodingError) {
        let count = try int(12, prefix + "NumEntries")
        let limit = maximum ?? 65535
        let bound = maximum.map { "1...\($0) (MaxVendorId)" } ?? "1...65535"
        for _ in 0..<count {
            let isRange = try bool(prefix + "IsARange")
            let startOffset = offset
            let start = try int(16, prefix + "StartOrOnlyVendorId")
            guard (1...max(limit, 1)).contains(start), limit > 0 else {
                throw invalid(
                    prefix + "StartOrOnlyVendorId", at: startOffset, found: "\(start)", "a vendor ID in \(bound)")
            }
            var end = start
            if isRange {
                let endOffset = offset
                end = try int(16, prefix + "EndVendorId")
                guard (start...limit).contains(end) else {
                    throw invalid(
                        prefix + "EndVendorId", at: endOffset, found: "\(end)",
                        "a vendor ID from \(start) (the range's start) to \(limit)")
                }
            }
            body(start...end)
        }
    }
}

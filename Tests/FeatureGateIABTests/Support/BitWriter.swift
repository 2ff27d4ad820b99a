/// Writes consent-string segments bit by bit, remembering where each field starts, so tests can build exactly
/// the string they mean (and know the field and offset a truncated copy must report).
struct BitWriter {
    struct Field: Equatable {
        var name: String
        var offset: Int
        var width: Int
    }

    private(set) var bits: [Bool] = []
    private(set) var fields: [Field] = []

    /// Appends `value` in `width` bits, big-endian.
    mutating func append(_ value: Int, _ width: Int, _ name: String) {
        fields.append(Field(name: name, offset: bits.count, width: width))
        for shift in stride(from: width - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
    }

    /// Appends a bit field of `width` bits with the 1-based `ids` set.
    mutating func appendBitField(_ ids: Set<Int>, _ width: Int, _ name: String) {
        fields.append(Field(name: name, offset: bits.count, width: width))
        for id in 1...max(width, 1) where id <= width { bits.append(ids.contains(id)) }
    }

    /// Appends raw bits written as "0101…" (spaces ignored) under one field name.
    mutating func appendBits(_ text: String, _ name: String) {
        let characters = text.filter { $0 != " " }
        fields.append(Field(name: name, offset: bits.count, width: characters.count))
        for character in characters { bits.append(character == "1") }
    }

    /// The bits as base64url without padding (the last character filled with zero bits).
    var base64URL: String { Self.base64URL(bits) }

    static func base64URL(_ bits: [Bool]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var result = ""
        var index = 0
        while index < bits.count {
            var value = 0
            for offset in 0..<6 {
                value <<= 1
                if index + offset < bits.count, bits[index + offset] { value |= 1 }
            }
            result.append(alphabet[value])
            index += 6
        }
        return result
    }

    /// The bits written as "0101…", e.g. for a bit-string vector.
    static func bits(_ text: String) -> [Bool] { text.filter { $0 != " " }.map { $0 == "1" } }
}

/// The core segment's fields in order, with values a test can change.
struct CoreFields {
    var version = 2
    var created = 15_100_821_554  // deciseconds
    var lastUpdated = 15_100_821_554
    var cmpID = 7
    var cmpVersion = 1
    var consentScreen = 3
    var language = (4, 13)  // "EN"
    var vendorListVersion = 150
    var policyVersion = 4
    var isServiceSpecific = true
    var useNonStandardTexts = false
    var specialFeatures: Set<Int> = [1]
    var purposeConsents: Set<Int> = [1, 3, 4, 7, 8]
    var purposeLegitimateInterests: Set<Int> = [2, 9, 10]
    var purposeOneTreatment = false
    var country = (3, 4)  // "DE"

    func write(to writer: inout BitWriter) {
        writer.append(version, 6, "Version")
        writer.append(created, 36, "Created")
        writer.append(lastUpdated, 36, "LastUpdated")
        writer.append(cmpID, 12, "CmpId")
        writer.append(cmpVersion, 12, "CmpVersion")
        writer.append(consentScreen, 6, "ConsentScreen")
        writer.append(language.0, 6, "ConsentLanguage")
        writer.append(language.1, 6, "ConsentLanguage")
        writer.append(vendorListVersion, 12, "VendorListVersion")
        writer.append(policyVersion, 6, "TcfPolicyVersion")
        writer.append(isServiceSpecific ? 1 : 0, 1, "IsServiceSpecific")
        writer.append(useNonStandardTexts ? 1 : 0, 1, "UseNonStandardTexts")
        writer.appendBitField(specialFeatures, 12, "SpecialFeatureOptIns")
        writer.appendBitField(purposeConsents, 24, "PurposesConsent")
        writer.appendBitField(purposeLegitimateInterests, 24, "PurposesLITransparency")
        writer.append(purposeOneTreatment ? 1 : 0, 1, "PurposeOneTreatment")
        writer.append(country.0, 6, "PublisherCC")
        writer.append(country.1, 6, "PublisherCC")
    }
}

extension BitWriter {
    /// A vendor section as a bit field.
    mutating func appendVendorBitField(_ ids: Set<Int>, maximum: Int, prefix: String) {
        append(maximum, 16, prefix + "MaxVendorId")
        append(0, 1, prefix + "IsRangeEncoding")
        appendBitField(ids, maximum, prefix + "BitField")
    }

    /// A vendor section (or restriction's vendor list, with `maximum` nil) as range entries.
    mutating func appendVendorRanges(_ ranges: [ClosedRange<Int>], maximum: Int?, prefix: String) {
        if let maximum {
            append(maximum, 16, prefix + "MaxVendorId")
            append(1, 1, prefix + "IsRangeEncoding")
        }
        append(ranges.count, 12, prefix + "NumEntries")
        for range in ranges {
            append(range.count > 1 ? 1 : 0, 1, prefix + "IsARange")
            append(range.lowerBound, 16, prefix + "StartOrOnlyVendorId")
            if range.count > 1 { append(range.upperBound, 16, prefix + "EndVendorId") }
        }
    }
}

/// A publisher restriction as a string writes it: purpose, type code (0–3) and range entries.
struct RestrictionFields {
    var purpose: Int
    var type: Int
    var vendors: [ClosedRange<Int>]
}

extension BitWriter {
    /// A whole core segment: `fields`, vendor consents as a bit field, no legitimate interests, `restrictions`.
    static func core(
        _ fields: CoreFields = CoreFields(), vendorConsents: Set<Int> = [], restrictions: [RestrictionFields] = []
    ) -> BitWriter {
        var writer = BitWriter()
        fields.write(to: &writer)
        writer.appendVendorBitField(vendorConsents, maximum: vendorConsents.max() ?? 0, prefix: "VendorConsents.")
        writer.appendVendorBitField([], maximum: 0, prefix: "VendorLegitimateInterests.")
        writer.append(restrictions.count, 12, "PubRestrictions.NumPubRestrictions")
        for restriction in restrictions {
            writer.append(restriction.purpose, 6, "PubRestrictions.PurposeId")
            writer.append(restriction.type, 2, "PubRestrictions.RestrictionType")
            writer.appendVendorRanges(restriction.vendors, maximum: nil, prefix: "PubRestrictions.")
        }
        return writer
    }

    /// Issue 22's string: 4,095 publisher restrictions (purposes 1–24, types 0–2 in turn), each one range entry
    /// covering every vendor, 1–65535. About 36 KB, naming 268 million restricted vendors.
    static var everyVendorRestrictedFourThousandTimes: String {
        core(
            restrictions: (0..<4095).map {
                RestrictionFields(purpose: $0 % 24 + 1, type: $0 % 3, vendors: [1...65535])
            }
        ).base64URL
    }
}

/// A decoded IAB Global Privacy Platform string: the header's section IDs, and the sections FeatureGate acts on
/// (US National, section 7; US Privacy, section 6). Other sections are kept as text.
///
/// Decode with ``init(_:)``; a malformed header, a section count that does not match the header, or a malformed
/// US National or US Privacy section throws a ``GPPStringError``.
public struct GPPString: Sendable, Hashable {
    /// The section ID of the US National section (`usnat`).
    public static let usNationalSectionID = 7
    /// The section ID of the US Privacy section (`uspv1`).
    public static let usPrivacySectionID = 6

    /// The header's version (1).
    public var version: Int
    /// The section IDs the header lists, ascending.
    public var sectionIDs: [Int]
    /// Each section's encoded text, by section ID.
    public var sections: [Int: String]
    /// The US National section, when present.
    public var usNational: USNationalSection?
    /// The US Privacy section, when present.
    public var usPrivacy: USPrivacyString?

    /// Decodes `string`: a header, then one `~`-separated section per section ID the header lists.
    ///
    /// - Throws: ``GPPStringError`` naming the section, field and bit offset of the first problem.
    public init(_ string: String) throws(GPPStringError) {
        let parts = string.split(separator: "~", omittingEmptySubsequences: false)
        var header = try GPPBitReader(parts[0], section: "header")
        let typeOffset = header.offset
        let type = try header.int(6, "Type")
        guard type == 3 else {
            throw header.invalid("Type", at: typeOffset, found: "\(type)", expected: "3 (a GPP header)")
        }
        let versionOffset = header.offset
        version = try header.int(6, "Version")
        guard version == 1 else {
            throw header.invalid("Version", at: versionOffset, found: "\(version)", expected: "1")
        }
        let count = try header.int(12, "SectionIds.NumEntries")
        var ids: [Int] = []
        for _ in 0..<count {
            let isRange = try header.int(1, "SectionIds.IsARange") == 1
            let startOffset = header.offset
            let start = (ids.last ?? 0) + (try header.fibonacci("SectionIds.StartOrOnlyId"))
            let end = isRange ? start + (try header.fibonacci("SectionIds.EndId")) : start
            guard end - start < 64, end < 1 << 16 else {
                throw header.invalid(
                    "SectionIds", at: startOffset, found: "\(start)...\(end)", expected: "section IDs below 65536")
            }
            ids.append(contentsOf: start...end)
        }
        sectionIDs = ids
        guard parts.count - 1 == ids.count else {
            throw GPPStringError(
                section: "header", field: "SectionIds", bitOffset: 24,
                found: "\(parts.count - 1) section\(parts.count == 2 ? "" : "s") after the header",
                expected: "one per section ID the header lists (\(ids.count))")
        }
        var sections: [Int: String] = [:]
        for (id, text) in zip(ids, parts.dropFirst()) { sections[id] = String(text) }
        self.sections = sections
        if let text = sections[Self.usNationalSectionID] {
            usNational = try USNationalSection(text)
        }
        if let text = sections[Self.usPrivacySectionID] {
            do {
                usPrivacy = try USPrivacyString(text)
            } catch {
                throw GPPStringError(
                    section: "uspv1", field: error.field, bitOffset: error.characterOffset * 8, found: error.found,
                    expected: error.expected)
            }
        }
    }
}

/// The US National section (`usnat`, section 7) of a GPP string, versions 1 and 2.
///
/// Two-bit answers are 0 (not applicable), 1 (yes / opted out) or 2 (no / did not opt out), as in the IAB's
/// specification.
public struct USNationalSection: Sendable, Hashable {
    /// An answer to an opt-out question.
    public enum OptOut: Int, Sendable, Hashable, CaseIterable {
        /// 0: the question does not apply.
        case notApplicable = 0
        /// 1: the user opted out.
        case optedOut = 1
        /// 2: the user did not opt out.
        case didNotOptOut = 2
    }

    /// The section's version (1 or 2).
    public var version: Int
    /// Notice of sharing of personal data (0 not applicable, 1 provided, 2 not provided).
    public var sharingNotice: Int
    /// Notice of the right to opt out of sale.
    public var saleOptOutNotice: Int
    /// Notice of the right to opt out of sharing.
    public var sharingOptOutNotice: Int
    /// Notice of the right to opt out of targeted advertising.
    public var targetedAdvertisingOptOutNotice: Int
    /// Notice of the right to opt out of sensitive data processing.
    public var sensitiveDataProcessingOptOutNotice: Int
    /// Notice of the right to limit use of sensitive data.
    public var sensitiveDataLimitUseNotice: Int
    /// The opt-out of the sale of personal data.
    public var saleOptOut: OptOut
    /// The opt-out of sharing personal data (for cross-context behavioural advertising).
    public var sharingOptOut: OptOut
    /// The opt-out of targeted advertising.
    public var targetedAdvertisingOptOut: OptOut
    /// Consent to processing each category of sensitive data (12 in version 1, 16 in version 2).
    public var sensitiveDataProcessing: [Int]
    /// Consent for known children's data (2 in version 1, 3 in version 2).
    public var knownChildSensitiveDataConsents: [Int]
    /// Consent to processing personal data beyond what the service needs.
    public var personalDataConsents: Int
    /// Whether the transaction is covered by the MSPA (1 yes, 2 no).
    public var mspaCoveredTransaction: Int
    /// MSPA opt-out option mode.
    public var mspaOptOutOptionMode: Int
    /// MSPA service provider mode.
    public var mspaServiceProviderMode: Int
    /// The Global Privacy Control signal, when the GPC subsection is present.
    public var globalPrivacyControl: Bool?

    /// Decodes the section's text (core, then an optional `.`-separated GPC subsection).
    ///
    /// - Throws: ``GPPStringError`` for a truncated section, an unknown version, or an opt-out value of 3.
    public init(_ text: String) throws(GPPStringError) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        var core = try GPPBitReader(parts[0], section: "usnat")
        let versionOffset = core.offset
        version = try core.int(6, "Version")
        guard version == 1 || version == 2 else {
            throw core.invalid("Version", at: versionOffset, found: "\(version)", expected: "1 or 2")
        }
        sharingNotice = try core.int(2, "SharingNotice")
        saleOptOutNotice = try core.int(2, "SaleOptOutNotice")
        sharingOptOutNotice = try core.int(2, "SharingOptOutNotice")
        targetedAdvertisingOptOutNotice = try core.int(2, "TargetedAdvertisingOptOutNotice")
        sensitiveDataProcessingOptOutNotice = try core.int(2, "SensitiveDataProcessingOptOutNotice")
        sensitiveDataLimitUseNotice = try core.int(2, "SensitiveDataLimitUseNotice")
        saleOptOut = try core.optOut("SaleOptOut")
        sharingOptOut = try core.optOut("SharingOptOut")
        targetedAdvertisingOptOut = try core.optOut("TargetedAdvertisingOptOut")
        var sensitive: [Int] = []
        for _ in 0..<(version == 1 ? 12 : 16) { sensitive.append(try core.int(2, "SensitiveDataProcessing")) }
        sensitiveDataProcessing = sensitive
        var children: [Int] = []
        for _ in 0..<(version == 1 ? 2 : 3) { children.append(try core.int(2, "KnownChildSensitiveDataConsents")) }
        knownChildSensitiveDataConsents = children
        personalDataConsents = try core.int(2, "PersonalDataConsents")
        mspaCoveredTransaction = try core.int(2, "MspaCoveredTransaction")
        mspaOptOutOptionMode = try core.int(2, "MspaOptOutOptionMode")
        mspaServiceProviderMode = try core.int(2, "MspaServiceProviderMode")
        globalPrivacyControl = nil
        for part in parts.dropFirst() {
            var subsection = try GPPBitReader(part, section: "usnat.gpc")
            let typeOffset = subsection.offset
            let type = try subsection.int(2, "SubsectionType")
            guard type == 1, globalPrivacyControl == nil else {
                throw subsection.invalid(
                    "SubsectionType", at: typeOffset, found: "\(type)", expected: "1 (the GPC subsection), once")
            }
            globalPrivacyControl = try subsection.int(1, "Gpc") == 1
        }
    }
}

/// Why a GPP string could not be decoded: which section, which field, at which bit.
public struct GPPStringError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The section: `header`, `usnat`, `usnat.gpc` or `uspv1`.
    public var section: String
    /// The field, named as in the IAB specification.
    public var field: String
    /// The bit offset of the field from the start of its section.
    public var bitOffset: Int
    /// What was found there.
    public var found: String
    /// What the specification expects there.
    public var expected: String

    /// Creates an error.
    public init(section: String, field: String, bitOffset: Int, found: String, expected: String) {
        self.section = section
        self.field = field
        self.bitOffset = bitOffset
        self.found = found
        self.expected = expected
    }

    /// One line naming the section, field and bit offset, what was found and what was expected.
    public var description: String {
        "GPP string \(section) section, \(field) at bit \(bitOffset): found \(found), expected \(expected)"
    }
}

/// A ``BitReader`` over one GPP section that throws ``GPPStringError``.
private struct GPPBitReader {
    var bits: BitReader
    let section: String
    var offset: Int { bits.offset }

    init(_ text: Substring, section: String) throws(GPPStringError) {
        guard !text.isEmpty else {
            throw GPPStringError(
                section: section, field: "base64url", bitOffset: 0, found: "nothing", expected: "a section")
        }
        switch BitReader.decode(text.utf8) {
        case .success(let bits): self.bits = bits
        case .failure(let failure):
            throw GPPStringError(
                section: section, field: "base64url", bitOffset: failure.characterOffset * 6,
                found: "byte 0x\(String(failure.byte, radix: 16)) at character \(failure.characterOffset)",
                expected: BitReader.alphabet)
        }
        self.section = section
    }

    func invalid(_ field: String, at offset: Int, found: String, expected: String) -> GPPStringError {
        GPPStringError(section: section, field: field, bitOffset: offset, found: found, expected: expected)
    }

    mutating func int(_ count: Int, _ field: String) throws(GPPStringError) -> Int {
        guard let value = bits.read(count) else {
            throw invalid(
                field, at: bits.offset, found: "\(bits.bitCount - bits.offset) bits left", expected: "\(count) bits")
        }
        return value
    }

    mutating func optOut(_ field: String) throws(GPPStringError) -> USNationalSection.OptOut {
        let start = offset
        let value = try int(2, field)
        guard let answer = USNationalSection.OptOut(rawValue: value) else {
            throw invalid(field, at: start, found: "\(value)", expected: "0, 1 or 2")
        }
        return answer
    }

    mutating func fibonacci(_ field: String) throws(GPPStringError) -> Int {
        let start = offset
        guard let value = bits.readFibonacci() else {
            throw invalid(field, at: start, found: "no terminated Fibonacci code", expected: "a code ending in 11")
        }
        return value
    }
}

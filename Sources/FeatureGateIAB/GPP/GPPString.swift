/// A decoded IAB Global Privacy Platform string: the header's section IDs, and the sections FeatureGate acts on
/// (US National, section 7; every US state section, 8 to 27; US Privacy, section 6). Other sections are kept as
/// text.
///
/// Decode with ``init(_:)``; a malformed header, a section count that does not match the header, or a malformed
/// US section throws a ``GPPString/DecodingError``.
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
    /// Every US section the string carries (7 to 27), decoded field by field, by section ID.
    public var usSections: [Int: GPPString.USSection]
    /// The US National section, when present.
    public var usNational: GPPString.USNationalSection?
    /// The US Privacy section, when present.
    public var usPrivacy: USPrivacyString?

    /// Decodes `string`: a header, then one `~`-separated section per section ID the header lists.
    ///
    /// - Throws: ``GPPString/DecodingError`` naming the section, field and bit offset of the first problem.
    public init(_ string: String) throws(GPPString.DecodingError) {
        let reading = GPPReading(string)
        if let error = reading.errors.first { throw error }
        version = reading.version ?? 1
        sectionIDs = reading.sectionIDs
        sections = reading.sections
        usSections = reading.usSections
        usNational = reading.usSections[Self.usNationalSectionID].map(GPPString.USNationalSection.init(decoded:))
        usPrivacy = reading.usPrivacy
    }
}

/// Everything that could be read of a GPP string, every problem included, for tools that show them all
/// (`featuregate gpp decode`). ``GPPString/init(_:)`` throws the first error instead.
package struct GPPReading: Sendable {
    /// The header's version, or `nil` when the header could not be read.
    package var version: Int?
    /// The section IDs the header lists (empty when it could not be read).
    package var sectionIDs: [Int] = []
    /// Each section's text, by ID.
    package var sections: [Int: String] = [:]
    /// The US sections that decoded.
    package var usSections: [Int: GPPString.USSection] = [:]
    /// The US Privacy section, when it decoded.
    package var usPrivacy: USPrivacyString?
    /// Every problem: a header problem stops the reading; each malformed section adds one.
    package var errors: [GPPString.DecodingError] = []

    /// Reads `string` section by section.
    package init(_ string: String) {
        do {
            try readHeader(string)
        } catch {
            errors.append(error)
        }
    }

    private mutating func readHeader(_ string: String) throws(GPPString.DecodingError) {
        let parts = string.split(separator: "~", omittingEmptySubsequences: false)
        var header = try GPPBitReader(parts[0], section: "header")
        let typeOffset = header.offset
        let type = try header.int(6, "Type")
        guard type == 3 else {
            throw header.invalid("Type", at: typeOffset, found: "\(type)", expected: "3 (a GPP header)")
        }
        let versionOffset = header.offset
        let version = try header.int(6, "Version")
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
        guard parts.count - 1 == ids.count else {
            throw GPPString.DecodingError(
                section: "header", field: "SectionIds", bitOffset: 24,
                found: "\(parts.count - 1) section\(parts.count == 2 ? "" : "s") after the header",
                expected: "one per section ID the header lists (\(ids.count))")
        }
        self.version = version
        sectionIDs = ids
        for (id, text) in zip(ids, parts.dropFirst()) {
            sections[id] = String(text)
            do {
                if GPPString.USSection.name(ofSection: id) != nil {
                    usSections[id] = try GPPString.USSection(sectionID: id, String(text))
                } else if id == GPPString.usPrivacySectionID {
                    usPrivacy = try Self.usPrivacy(String(text))
                }
            } catch {
                errors.append(error)
            }
        }
    }

    private static func usPrivacy(_ text: String) throws(GPPString.DecodingError) -> USPrivacyString {
        do {
            return try USPrivacyString(text)
        } catch {
            throw GPPString.DecodingError(
                section: "uspv1", field: error.field, bitOffset: error.characterOffset * 8, found: error.found,
                expected: error.expected)
        }
    }
}

extension GPPString {
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
        /// - Throws: ``GPPString/DecodingError`` for a truncated section, an unknown version, or an opt-out value of 3.
        public init(_ text: String) throws(GPPString.DecodingError) {
            self.init(decoded: try GPPString.USSection(sectionID: GPPString.usNationalSectionID, text))
        }

        /// The typed view of a decoded `usnat` section (every field is there: the table lays them all out).
        init(decoded section: GPPString.USSection) {
            func int(_ name: String) -> Int {
                if case .int(let value)? = section[name] { return value }
                return 0
            }
            func list(_ name: String) -> [Int] {
                if case .list(let values)? = section[name] { return values }
                return []
            }
            version = section.version
            sharingNotice = int("SharingNotice")
            saleOptOutNotice = int("SaleOptOutNotice")
            sharingOptOutNotice = int("SharingOptOutNotice")
            targetedAdvertisingOptOutNotice = int("TargetedAdvertisingOptOutNotice")
            sensitiveDataProcessingOptOutNotice = int("SensitiveDataProcessingOptOutNotice")
            sensitiveDataLimitUseNotice = int("SensitiveDataLimitUseNotice")
            saleOptOut = section.saleOptOut ?? .notApplicable
            sharingOptOut = section.sharingOptOut ?? .notApplicable
            targetedAdvertisingOptOut = section.targetedAdvertisingOptOut ?? .notApplicable
            sensitiveDataProcessing = list("SensitiveDataProcessing")
            knownChildSensitiveDataConsents = list("KnownChildSensitiveDataConsents")
            personalDataConsents = int("PersonalDataConsents")
            mspaCoveredTransaction = int("MspaCoveredTransaction")
            mspaOptOutOptionMode = int("MspaOptOutOptionMode")
            mspaServiceProviderMode = int("MspaServiceProviderMode")
            globalPrivacyControl = section.globalPrivacyControl
        }
    }
}

extension GPPString {
    /// Why a GPP string could not be decoded: which section, which field, at which bit.
    public struct DecodingError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The section: `header`, a US section's prefix (`usnat`, `usca`…), its GPC subsection (`usca.gpc`), or
        /// `uspv1`.
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
}

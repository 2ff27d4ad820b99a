import Foundation

/// A decoded IAB TCF v2 Transparency & Consent string (TCF v2.2), with every field of every segment.
///
/// Decode with ``init(_:)``; a string that is malformed, truncated or of another TCF version throws a
/// ``TCString/DecodingError`` and grants nothing. Optional segments that are absent read as `nil`. Decoding is pure: it
/// reads nothing else and stores nothing.
public struct TCString: Sendable, Hashable {
    /// The TCF version of the string; always 2 for a decoded string.
    public var version: Int
    /// When the string was first created (to the decisecond).
    public var created: Date
    /// When the string was last updated (to the decisecond).
    public var lastUpdated: Date
    /// The ID of the consent management platform that wrote the string.
    public var cmpID: Int
    /// The CMP's version.
    public var cmpVersion: Int
    /// The screen of the CMP on which consent was given.
    public var consentScreen: Int
    /// The two-letter language (ISO 639-1, upper case) of the consent screen.
    public var consentLanguage: String
    /// The version of the Global Vendor List used.
    public var vendorListVersion: Int
    /// The TCF policy version (4 for TCF v2.2).
    public var tcfPolicyVersion: Int
    /// Whether the signals apply only to the service that wrote them (not shared across services). Always `true`
    /// for policy version 4 and later: TCF v2.2 has no global scope, and such a string does not decode.
    public var isServiceSpecific: Bool
    /// Whether the CMP used non-standard texts (formerly `UseNonStandardStacks`).
    public var useNonStandardTexts: Bool
    /// The special features the user opted in to (1–12).
    public var specialFeatureOptIns: TCString.IDSet
    /// The purposes the user consented to (1–24).
    public var purposeConsents: TCString.IDSet
    /// The purposes whose legitimate interest the user did not object to (1–24).
    public var purposeLegitimateInterests: TCString.IDSet
    /// Whether purpose 1 was not disclosed (publisher in a country that treats it differently).
    public var purposeOneTreatment: Bool
    /// The publisher's country (ISO 3166-1 alpha-2, upper case).
    public var publisherCountryCode: String
    /// The vendors the user consented to.
    public var vendorConsents: TCString.IDSet
    /// The vendors whose legitimate interest the user did not object to.
    public var vendorLegitimateInterests: TCString.IDSet
    /// The publisher's restrictions, in the order the string lists them.
    public var publisherRestrictions: [TCString.PublisherRestriction]
    /// The disclosed-vendors segment, when present.
    public var disclosedVendors: TCString.IDSet?
    /// The allowed-vendors segment, when present (no longer written under TCF v2.2, still decoded).
    public var allowedVendors: TCString.IDSet?
    /// The publisher-TC segment, when present.
    public var publisherTC: TCString.PublisherTC?

    /// Creates a value with every field given; for tests and tools. Decode strings with ``init(_:)``.
    public init(
        version: Int = 2, created: Date, lastUpdated: Date, cmpID: Int, cmpVersion: Int, consentScreen: Int,
        consentLanguage: String, vendorListVersion: Int, tcfPolicyVersion: Int, isServiceSpecific: Bool,
        useNonStandardTexts: Bool, specialFeatureOptIns: TCString.IDSet, purposeConsents: TCString.IDSet,
        purposeLegitimateInterests: TCString.IDSet, purposeOneTreatment: Bool, publisherCountryCode: String,
        vendorConsents: TCString.IDSet, vendorLegitimateInterests: TCString.IDSet,
        publisherRestrictions: [TCString.PublisherRestriction] = [], disclosedVendors: TCString.IDSet? = nil,
        allowedVendors: TCString.IDSet? = nil, publisherTC: TCString.PublisherTC? = nil
    ) {
        self.version = version
        self.created = created
        self.lastUpdated = lastUpdated
        self.cmpID = cmpID
        self.cmpVersion = cmpVersion
        self.consentScreen = consentScreen
        self.consentLanguage = consentLanguage
        self.vendorListVersion = vendorListVersion
        self.tcfPolicyVersion = tcfPolicyVersion
        self.isServiceSpecific = isServiceSpecific
        self.useNonStandardTexts = useNonStandardTexts
        self.specialFeatureOptIns = specialFeatureOptIns
        self.purposeConsents = purposeConsents
        self.purposeLegitimateInterests = purposeLegitimateInterests
        self.purposeOneTreatment = purposeOneTreatment
        self.publisherCountryCode = publisherCountryCode
        self.vendorConsents = vendorConsents
        self.vendorLegitimateInterests = vendorLegitimateInterests
        self.publisherRestrictions = publisherRestrictions
        self.disclosedVendors = disclosedVendors
        self.allowedVendors = allowedVendors
        self.publisherTC = publisherTC
    }

    /// Decodes `string`: the core segment, then any of the optional segments, separated by dots, each base64url
    /// with or without `=` padding. Surrounding white space is not allowed.
    ///
    /// Decoding time and the value's size grow with the string's length, never with the IDs its ranges cover.
    ///
    /// - Throws: ``TCString/DecodingError`` naming the segment, field and bit offset of the first problem, including
    ///   `IsServiceSpecific` = 0 under TCF policy version 4 or later, which TCF v2.2 calls invalid, and a string
    ///   created on or after 1 March 2026 (``disclosedVendorsRequiredSince``) without a disclosed-vendors segment,
    ///   which TCF v2.3 calls invalid (an ``TCString/DecodingError/Kind/invalidSegment`` error). Bits after
    ///   the last field of a segment (padding to a whole character) are ignored, as the specification says.
    public init(_ string: String) throws(TCString.DecodingError) {
        self = try TCStringDecoder.decode(string)
    }

    /// Decodes `string` as ``init(_:)`` does, but keeps a string that breaks the TCF v2.3 disclosed-vendors rule,
    /// so a tool can show its fields beside the error (``disclosedVendorsViolation``). Nothing that decides
    /// consent uses it.
    package init(inspecting string: String) throws(TCString.DecodingError) {
        self = try TCStringDecoder.decode(string, enforcingDisclosedVendors: false)
    }

    /// The first moment TCF v2.3 requires the disclosed-vendors segment: strings created on or after
    /// 1 March 2026, 00:00 UTC, without it are invalid.
    public static let disclosedVendorsRequiredSince = Date(timeIntervalSince1970: 1_772_323_200)

    /// The error that makes this string invalid under TCF v2.3 (created on or after
    /// ``disclosedVendorsRequiredSince`` without a disclosed-vendors segment), or `nil`.
    package var disclosedVendorsViolation: TCString.DecodingError? {
        disclosedVendorsViolation(
            segmentCount: 1 + [disclosedVendors, allowedVendors].compactMap { $0 }.count
                + (publisherTC == nil ? 0 : 1))
    }

    func disclosedVendorsViolation(segmentCount: Int) -> TCString.DecodingError? {
        guard disclosedVendors == nil, created >= Self.disclosedVendorsRequiredSince else { return nil }
        return TCString.DecodingError(
            kind: .invalidSegment, segment: .disclosedVendors, segmentIndex: segmentCount, field: "SegmentType",
            bitOffset: 0, found: "no disclosed-vendors segment in a string created \(created.formatted(.iso8601))",
            expected: "a disclosed-vendors segment (segment type 1): TCF v2.3 requires it in every string created "
                + "on or after 2026-03-01")
    }
}

extension TCString {
    /// A restriction a publisher puts on how vendors may process one purpose.
    public struct PublisherRestriction: Sendable, Hashable {
        /// What the publisher requires.
        public enum RestrictionType: String, Sendable, Hashable, CaseIterable {
            /// The vendors may not process the purpose at all (type 0).
            case notAllowed
            /// The vendors may process the purpose only with consent (type 1).
            case requireConsent
            /// The vendors may process the purpose only under legitimate interest (type 2).
            case requireLegitimateInterest
            /// Type 3, which the specification lists as undefined (not used). The string still decodes, with a
            /// ``TCString/Warning/undefinedRestrictionType(purposes:)`` warning, and ``CMPConsent`` treats the
            /// vendors as not allowed to process the purpose, as for ``notAllowed``.
            case undefined
        }

        /// The purpose restricted (1–24).
        public var purpose: Int
        /// What the publisher requires.
        public var type: RestrictionType
        /// The vendors the restriction applies to, kept as the ranges the string encodes (one entry can name all
        /// 65,535 vendors).
        public var vendors: TCString.IDRanges

        /// Creates a restriction.
        public init(purpose: Int, type: RestrictionType, vendors: TCString.IDRanges) {
            self.purpose = purpose
            self.type = type
            self.vendors = vendors
        }
    }
}

extension TCString {
    /// The publisher-TC segment: the publisher's own purposes, and its custom purposes.
    public struct PublisherTC: Sendable, Hashable {
        /// The purposes the user consented to for the publisher's own processing (1–24).
        public var purposeConsents: TCString.IDSet
        /// The purposes whose legitimate interest for the publisher the user did not object to (1–24).
        public var purposeLegitimateInterests: TCString.IDSet
        /// How many custom purposes the publisher declared (0–63).
        public var numberOfCustomPurposes: Int
        /// The custom purposes the user consented to.
        public var customPurposeConsents: TCString.IDSet
        /// The custom purposes whose legitimate interest the user did not object to.
        public var customPurposeLegitimateInterests: TCString.IDSet

        /// Creates a segment.
        public init(
            purposeConsents: TCString.IDSet, purposeLegitimateInterests: TCString.IDSet, numberOfCustomPurposes: Int,
            customPurposeConsents: TCString.IDSet, customPurposeLegitimateInterests: TCString.IDSet
        ) {
            self.purposeConsents = purposeConsents
            self.purposeLegitimateInterests = purposeLegitimateInterests
            self.numberOfCustomPurposes = numberOfCustomPurposes
            self.customPurposeConsents = customPurposeConsents
            self.customPurposeLegitimateInterests = customPurposeLegitimateInterests
        }
    }
}

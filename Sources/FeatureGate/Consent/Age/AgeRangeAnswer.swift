import Foundation

/// A user's answer to an age request: the age range they (or a parent) declared, with how it was declared and the
/// parental controls active, or a refusal to share it.
///
/// Bounds are whole years, as Apple's Declared Age Range framework returns them: `lowerBound` `nil` means "no lower
/// bound" (0), `upperBound` `nil` means "no upper bound". The `FeatureGateAgeRange` product turns an
/// `AgeRangeService` response into this; anything else (a server, a sign-up form) can build one too. A range built
/// without a declaration reads as ``AgeRangeDeclaration/unspecified``, the least trusted kind.
///
/// Stored (``FileAgeRangeAnswerStore``) as `{"range":{"lowerBound":…,"upperBound":…,"declaration":…,
/// "parentalControls":[…]}}` or `{"declined":{}}`. A record written before declarations were kept has neither key and
/// reads as ``AgeRangeDeclaration/unspecified`` with no parental controls; a declaration or control this version does
/// not know reads as ``AgeRangeDeclaration/unspecified`` or ``AgeRangeParentalControls/unrecognized``.
public enum AgeRangeAnswer: Sendable, Hashable {
    /// The user shared an age range, declared as `declaration`, with `parentalControls` active.
    case range(
        lowerBound: Int?, upperBound: Int?, declaration: AgeRangeDeclaration = .unspecified,
        parentalControls: AgeRangeParentalControls = [])
    /// The user declined to share one.
    case declined
}

/// How a declared age range was set: by the person or a guardian, and whether a method checked it. Apple's
/// `AgeRangeService.AgeRangeDeclaration`, one case per kind its documentation lists.
///
/// ``ChildAgeRule/adultRangeDeclaration`` decides which kinds may lift the child mark. Stored by name; a name this
/// version does not know reads as ``unspecified``.
public enum AgeRangeDeclaration: String, Sendable, Hashable, CaseIterable, Codable {
    /// Not said, or a kind this version does not know: the least trusted kind.
    case unspecified
    /// The person set their own age range (`selfDeclared`).
    case selfDeclared
    /// A parent, guardian or Family Organizer set it (`guardianDeclared`).
    case guardianDeclared
    /// The person set it, checked by a method Apple does not name (`checkedByOtherMethod`, iOS 26.2).
    case checkedByOtherMethod
    /// The person set it, checked with a government ID (`governmentIDChecked`, iOS 26.2).
    case governmentIDChecked
    /// A guardian set it, checked with a payment method such as a credit card (`guardianPaymentChecked`,
    /// iOS 26.2).
    case guardianPaymentChecked
    /// Set with a scrutinized method such as a credit card or government ID (`confirmed`, iOS 26.5).
    case confirmed

    /// Whether a method checked the range (every kind but the declared ones and ``unspecified``).
    public var isChecked: Bool {
        switch self {
        case .unspecified, .selfDeclared, .guardianDeclared: false
        case .checkedByOtherMethod, .governmentIDChecked, .guardianPaymentChecked, .confirmed: true
        }
    }

    /// Reads a stored name; one this version does not know is ``unspecified`` (fail closed).
    public init(from decoder: any Decoder) throws {
        self = Self(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .unspecified
    }
}

/// The parental controls active on the device when the range was shared: Apple's
/// `AgeRangeService.ParentalControls`, by name.
///
/// Kept with the answer for the app to act on; they do not decide the child mark. Stored as a list of names; a name
/// this version does not know reads as ``unrecognized``.
public struct AgeRangeParentalControls: OptionSet, Sendable, Hashable, Codable {
    /// FeatureGate's bits for the controls (not Apple's raw values); stored by name, never by this number.
    public let rawValue: Int

    /// Creates a set from its raw value (FeatureGate's bits, not Apple's).
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The system limits communication features for the minor (`communicationLimits`).
    public static let communicationLimits = AgeRangeParentalControls(rawValue: 1 << 0)
    /// A guardian must be notified before significant app changes (`significantAppChangeApprovalRequired`, iOS 26.2,
    /// deprecated in 26.4 for `requiredRegulatoryFeatures`).
    public static let significantAppChangeApprovalRequired = AgeRangeParentalControls(rawValue: 1 << 1)
    /// A control this version does not name (a newer Apple control, or an unknown stored name).
    public static let unrecognized = AgeRangeParentalControls(rawValue: 1 << 30)

    private static let names: [(String, AgeRangeParentalControls)] = [
        ("communicationLimits", .communicationLimits),
        ("significantAppChangeApprovalRequired", .significantAppChangeApprovalRequired),
        ("unrecognized", .unrecognized),
    ]

    /// Reads a list of names.
    public init(from decoder: any Decoder) throws {
        let stored = try decoder.singleValueContainer().decode([String].self)
        self = []
        for name in stored { insert(Self.names.first { $0.0 == name }?.1 ?? .unrecognized) }
    }

    /// Writes the list of names.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Self.names.filter { contains($0.1) }.map(\.0))
    }
}

extension AgeRangeAnswer: Codable {
    /// Reads `{"range":{…}}` or `{"declined":{}}`; a range without a declaration (written before they were kept) is
    /// ``AgeRangeDeclaration/unspecified`` with no parental controls.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        if container.contains("range") {
            let range = try container.nestedContainer(keyedBy: JSONKey.self, forKey: "range")
            self = .range(
                lowerBound: try range.decodeIfPresent(Int.self, forKey: "lowerBound"),
                upperBound: try range.decodeIfPresent(Int.self, forKey: "upperBound"),
                declaration: try range.decodeIfPresent(AgeRangeDeclaration.self, forKey: "declaration") ?? .unspecified,
                parentalControls: try range.decodeIfPresent(AgeRangeParentalControls.self, forKey: "parentalControls")
                    ?? [])
        } else if container.contains("declined") {
            self = .declined
        } else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "neither range nor declined"))
        }
    }

    /// Writes `{"range":{…}}` or `{"declined":{}}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        switch self {
        case .declined:
            _ = container.nestedContainer(keyedBy: JSONKey.self, forKey: "declined")
        case .range(let lower, let upper, let declaration, let controls):
            var range = container.nestedContainer(keyedBy: JSONKey.self, forKey: "range")
            try range.encodeIfPresent(lower, forKey: "lowerBound")
            try range.encodeIfPresent(upper, forKey: "upperBound")
            try range.encode(declaration, forKey: "declaration")
            try range.encode(controls, forKey: "parentalControls")
        }
    }
}

/// Which declarations let a range at or above the child age lift the child mark: any (the default), or only a
/// guardian's or a checked one, so that a child's own "18+" keeps the mark.
public enum AdultRangeDeclaration: String, Sendable, Hashable, CaseIterable {
    /// Any declaration, ``AgeRangeDeclaration/unspecified`` included (config value `"any"`).
    case any
    /// A guardian's declaration or a checked one (config value `"guardianOrChecked"`).
    case guardianOrChecked
    /// A checked one only (config value `"checked"`).
    case checked

    /// Whether `declaration` may lift the child mark.
    public func accepts(_ declaration: AgeRangeDeclaration) -> Bool {
        switch self {
        case .any: true
        case .guardianOrChecked: declaration.isChecked || declaration == .guardianDeclared
        case .checked: declaration.isChecked
        }
    }
}

/// When a declared age range makes the user a child: under ``childUnderAge`` (13 by default), what a refusal to
/// share counts as (a child, by default), and which declarations an adult range needs (any, by default).
///
/// Fail closed: a range that reaches below the age (it straddles it, or has no lower bound) counts as a child, and so
/// does a range that makes no sense (a lower bound above the upper one, a negative bound), and a range at or above
/// the age whose declaration ``adultRangeDeclaration`` does not accept. A config file's `consentPolicy` sets it with
/// `childUnderAge`, `declinedAgeRange` and `adultRangeDeclaration` (FeatureGateConfig).
public struct ChildAgeRule: Sendable, Hashable {
    /// The age under which a user is a child (COPPA's 13 by default; 16 under GDPR article 8 in some countries).
    public var childUnderAge: Int
    /// Whether a user who declines to share an age range counts as a child (`true` by default).
    public var declinedIsChild: Bool
    /// Which declarations let a range at or above ``childUnderAge`` lift the child mark (``AdultRangeDeclaration/any``
    /// by default).
    public var adultRangeDeclaration: AdultRangeDeclaration

    /// Creates a rule; an age below 1 is read as 1.
    public init(
        childUnderAge: Int = 13, declinedIsChild: Bool = true, adultRangeDeclaration: AdultRangeDeclaration = .any
    ) {
        self.childUnderAge = max(childUnderAge, 1)
        self.declinedIsChild = declinedIsChild
        self.adultRangeDeclaration = adultRangeDeclaration
    }

    /// Whether `answer` marks the user as a child.
    public func isChild(_ answer: AgeRangeAnswer) -> Bool {
        switch answer {
        case .declined:
            return declinedIsChild
        case .range(let lower, let upper, let declaration, _):
            let lower = lower ?? 0
            if lower < 0 || (upper.map { $0 < lower || $0 < 0 } ?? false) { return true }
            // Only a range wholly at or above the age is not a child: one that straddles it might be.
            if lower < childUnderAge { return true }
            return !adultRangeDeclaration.accepts(declaration)
        }
    }
}

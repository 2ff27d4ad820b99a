/// What a person has said about one consent category.
///
/// `unknown` is not `denied`: it means nobody has asked yet (or a grant went stale with a policy update), so the
/// app still needs to prompt. Both leave the mapped features off under an opt-in rule.
///
/// `expired` is what an answer reads as once its lifetime (``ConsentPolicy/grantLifetimeDays``,
/// ``ConsentPolicy/refusalLifetimeDays``) has run out: the app must ask again. An expired grant counts as
/// unanswered (the region's ``ConsentPolicy/unanswered`` rule applies); an expired refusal is still not permission.
/// It is never an answer: ``ConsentManager/setStatus(_:for:source:)`` ignores it.
public enum ConsentStatus: String, Sendable, Hashable, CaseIterable, Codable {
    /// Not asked yet, or the last grant was made under an older policy version.
    case unknown
    /// The person agreed.
    case granted
    /// The person refused.
    case denied
    /// The system or a guardian decides, and the person cannot grant (App Tracking Transparency's `restricted`).
    case restricted
    /// The last answer's lifetime ran out; ask again. Recorded in the ledger when the running app notices it.
    case expired

    /// Whether features mapped to a category with this status may run under an opt-in policy: only `granted`.
    ///
    /// A policy that lets unanswered categories run (``ConsentPolicy/permittedUntilAsked``) allows `unknown` too;
    /// ask the policy, ``ConsentPolicy/allowsProcessing(_:for:)``, for the rule the gate applies.
    @inlinable
    public var allowsProcessing: Bool { self == .granted }

    /// Whether this is a refusal: denied or restricted. A refusal decides the category's features off.
    @inlinable
    public var isRefusal: Bool { self == .denied || self == .restricted }
}

/// A purpose a person can consent to: analytics, advertising, third-party sharing, or one the app defines.
public struct ConsentCategory: RawRepresentable, Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The category's stable name, written into the consent ledger.
    public let rawValue: String

    /// Creates a category. App-defined categories use their own names, e.g. `ConsentCategory("personalization")`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Creates a category named `name`.
    public init(_ name: String) {
        self.rawValue = name
    }

    /// Measuring how the app is used: events, sessions, uploads.
    public static let analytics = ConsentCategory("analytics")
    /// Advertising and cross-app tracking; App Tracking Transparency maps onto it.
    public static let advertising = ConsentCategory("advertising")
    /// Sharing personal data with third parties.
    public static let thirdPartySharing = ConsentCategory("thirdPartySharing")

    /// The name.
    public var description: String { UntrustedText.escaped(rawValue) }

    /// Orders categories by name, for stable output.
    public static func < (lhs: ConsentCategory, rhs: ConsentCategory) -> Bool { lhs.rawValue < rhs.rawValue }
}

import Foundation

/// Why the app must ask about a category again.
public enum ConsentAskReason: String, Sendable, Hashable, CaseIterable {
    /// Nobody has answered.
    case neverAsked
    /// The last grant was given under an older policy version (or the ledger is damaged, so it cannot be trusted).
    case policyVersionChanged
    /// The grant's lifetime ran out.
    case grantExpired
    /// The refusal's lifetime ran out (it still withholds until someone answers).
    case refusalExpired
    /// An outside source (a consent platform, ATT, a server) answered before and has no answer now.
    case sourceAnswerMissing
}

/// What holds a category's features off other than a plain refusal or missing answer.
public enum ConsentBlocker: String, Sendable, Hashable, CaseIterable {
    /// The user is marked a child and the category is ``ConsentPolicy/childProhibited``.
    case child
    /// A Global Privacy Control signal is on and refused the category (``ConsentPolicy/saleOrSharing``).
    case globalPrivacyControl
    /// The category is unanswered (or its grant expired or went stale) and the region's rule is opt-in.
    case region
}

/// Everything a privacy dashboard shows about one category, as ``ConsentPolicy/decision(for:answer:context:now:)``
/// judges it.
public struct ConsentDecision: Sendable, Hashable {
    /// The category.
    public var category: ConsentCategory
    /// Its status: the answer, `unknown` when stale or unanswered, `expired` when its lifetime ran out.
    public var status: ConsentStatus
    /// Whether its features may run.
    public var isPermitted: Bool
    /// When the answer was given, or `nil` when there is none (or only the gate state kept it).
    public var decidedAt: Date?
    /// Who gave the answer, or `nil`.
    public var source: ConsentSource?
    /// When the answer expires (or expired), or `nil` when it never does.
    public var expiresAt: Date?
    /// Why the app must ask again, or `nil` when it need not.
    public var askReason: ConsentAskReason?
    /// What holds the category off beyond its answer, or `nil`.
    public var blocker: ConsentBlocker?

    /// Whether the app must ask about the category (again).
    public var needsAsking: Bool { askReason != nil }

    /// Creates a decision.
    public init(
        category: ConsentCategory,
        status: ConsentStatus,
        isPermitted: Bool,
        decidedAt: Date? = nil,
        source: ConsentSource? = nil,
        expiresAt: Date? = nil,
        askReason: ConsentAskReason? = nil,
        blocker: ConsentBlocker? = nil
    ) {
        self.category = category
        self.status = status
        self.isPermitted = isPermitted
        self.decidedAt = decidedAt
        self.source = source
        self.expiresAt = expiresAt
        self.askReason = askReason
        self.blocker = blocker
    }
}

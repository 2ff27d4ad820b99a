import Foundation

/// A user's answer to an age request: the age range they (or a parent) declared, or a refusal to share it.
///
/// Bounds are whole years, as Apple's Declared Age Range framework returns them: `lowerBound` `nil` means "no lower
/// bound" (0), `upperBound` `nil` means "no upper bound". The `FeatureGateAgeRange` product turns an
/// `AgeRangeService` response into this; anything else (a server, a sign-up form) can build one too.
public enum AgeRangeAnswer: Sendable, Hashable, Codable {
    /// The user shared an age range.
    case range(lowerBound: Int?, upperBound: Int?)
    /// The user declined to share one.
    case declined
}

/// When a declared age range makes the user a child: under ``childUnderAge`` (13 by default), and what a refusal
/// to share counts as (a child, by default).
///
/// Fail closed: a range that reaches below the age (it straddles it, or has no lower bound) counts as a child, and so
/// does a range that makes no sense (a lower bound above the upper one, a negative bound). A config file's
/// `consentPolicy` sets it with `childUnderAge` and `declinedAgeRange` (FeatureGateConfig).
public struct ChildAgeRule: Sendable, Hashable {
    /// The age under which a user is a child (COPPA's 13 by default; 16 under GDPR article 8 in some countries).
    public var childUnderAge: Int
    /// Whether a user who declines to share an age range counts as a child (`true` by default).
    public var declinedIsChild: Bool

    /// Creates a rule; an age below 1 is read as 1.
    public init(childUnderAge: Int = 13, declinedIsChild: Bool = true) {
        self.childUnderAge = max(childUnderAge, 1)
        self.declinedIsChild = declinedIsChild
    }

    /// Whether `answer` marks the user as a child.
    public func isChild(_ answer: AgeRangeAnswer) -> Bool {
        switch answer {
        case .declined:
            return declinedIsChild
        case .range(let lower, let upper):
            let lower = lower ?? 0
            if lower < 0 || (upper.map { $0 < lower || $0 < 0 } ?? false) { return true }
            // Only a range wholly at or above the age is not a child: one that straddles it might be.
            return lower < childUnderAge
        }
    }
}

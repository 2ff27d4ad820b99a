import Foundation

/// What an unanswered category means.
public enum UnansweredConsent: String, Sendable, Hashable, CaseIterable {
    /// Not permitted until granted (the GDPR).
    case optIn
    /// Permitted until refused (US state privacy laws).
    case optOut
}

/// What an unanswered category means, per region: a default, and rules for countries and subdivisions.
///
/// The most specific rule that matches wins: the subdivision's (`US-CA`), then its country's (`US`), then the
/// default. Without a region only the default applies.
public struct UnansweredConsentRules: Sendable, Hashable {
    /// The rule where no region rule matches, or no region is known. `optIn` unless set.
    public var `default`: UnansweredConsent
    /// Rules for countries and subdivisions.
    public var regions: [ConsentRegion: UnansweredConsent]

    /// Creates rules; by default opt-in everywhere.
    public init(default: UnansweredConsent = .optIn, regions: [ConsentRegion: UnansweredConsent] = [:]) {
        self.default = `default`
        self.regions = regions
    }

    /// The rule for `region`: the most specific one that matches.
    public func rule(for region: ConsentRegion?) -> UnansweredConsent {
        guard let region else { return self.default }
        return regions[region] ?? regions[region.country] ?? self.default
    }
}

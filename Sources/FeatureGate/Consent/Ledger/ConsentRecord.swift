import Foundation

/// Who or what changed a consent status.
public enum ConsentSource: String, Sendable, Hashable, CaseIterable, Codable {
    /// The person, through the app's consent UI.
    case user
    /// A default the app applied without asking (e.g. denied in a region that requires opt-in).
    case appDefault
    /// App Tracking Transparency's status, mapped onto advertising.
    case att
    /// Carried over from another consent system or an older app version.
    case migration
    /// A server (e.g. a consent-management platform) said so.
    case remote
    /// A consent management platform on the device, read from the IAB keys it writes (`IABTCF_*`, US Privacy,
    /// GPP) by FeatureGateIAB's `CMPConsentSource`; recorded only when the platform's answer changes.
    case cmp
    /// A Global Privacy Control signal (from the app's web views, its server, or GPP's US National `Gpc` field),
    /// passed to ``ConsentManager/applyGlobalPrivacyControl(_:)``: when it turns on, the policy's
    /// ``ConsentPolicy/saleOrSharing`` categories are refused. Its ledger records of `unknown` say the signal went
    /// off; they change no status.
    case gpc

    /// Whether this is an outside source, whose answer decides only when it changes
    /// (``ConsentManager/applyAnswer(_:for:source:)``): ATT, a CMP, a server, Global Privacy Control.
    public var isOutside: Bool {
        switch self {
        case .att, .cmp, .remote, .gpc: true
        case .user, .appDefault, .migration: false
        }
    }
}

/// One entry of the consent audit trail: a category's status changed.
///
/// Records are appended and never rewritten, so the trail answers "what did this person agree to, when, and
/// under which terms" for a data-subject or compliance request.
public struct ConsentRecord: Sendable, Hashable, Codable {
    /// The category that changed.
    public var category: ConsentCategory
    /// The status before the change, as the app saw it (a stale grant reads as `unknown`).
    public var previousStatus: ConsentStatus
    /// The status after the change.
    public var newStatus: ConsentStatus
    /// When the change was made.
    public var time: Date
    /// The version of the ``ConsentPolicy`` in force.
    public var policyVersion: Int
    /// Who or what made the change.
    public var source: ConsentSource

    /// Creates a record.
    public init(
        category: ConsentCategory,
        previousStatus: ConsentStatus,
        newStatus: ConsentStatus,
        time: Date,
        policyVersion: Int,
        source: ConsentSource
    ) {
        self.category = category
        self.previousStatus = previousStatus
        self.newStatus = newStatus
        self.time = time
        self.policyVersion = policyVersion
        self.source = source
    }

    /// Decodes a record from the keyed form ``encode(to:)`` writes; every field is required.
    public init(from decoder: any Decoder) throws {
        // Written out with the shared ``JSONKey``, as the synthesized conformance did: the same keys and values.
        let container = try decoder.container(keyedBy: JSONKey.self)
        category = try container.decode(ConsentCategory.self, forKey: "category")
        previousStatus = try container.decode(ConsentStatus.self, forKey: "previousStatus")
        newStatus = try container.decode(ConsentStatus.self, forKey: "newStatus")
        time = try container.decode(Date.self, forKey: "time")
        policyVersion = try container.decode(Int.self, forKey: "policyVersion")
        source = try container.decode(ConsentSource.self, forKey: "source")
    }

    /// Encodes the record keyed by its property names (`category`, `previousStatus`, `newStatus`, `time`,
    /// `policyVersion`, `source`), the time as the encoder encodes a `Date`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        try container.encode(category, forKey: "category")
        try container.encode(previousStatus, forKey: "previousStatus")
        try container.encode(newStatus, forKey: "newStatus")
        try container.encode(time, forKey: "time")
        try container.encode(policyVersion, forKey: "policyVersion")
        try container.encode(source, forKey: "source")
    }
}

/// Who decided a feature's local value: the answer to "why is this feature off?".
public enum FeatureSource: String, Sendable, Hashable, CaseIterable {
    /// Nobody decided: the flag follows the configuration's `enabledFeatures`.
    case configuration
    /// Decided in an earlier run (by the app, the user or consent), read from the stored state at start-up.
    case storedState = "stored state"
    /// Nobody decided since `resetEnabledFeatures` discarded the stored state: the configuration's value.
    case reset
    /// Nobody decided since the stored state proved unreadable (see the manager's
    /// ``PrivacyManager/startupDiagnostics``): the configuration's value for a corrupt record, off while the record
    /// cannot be read at all (``PrivacyManager/isHoldingWrites``).
    case unreadableStoredState = "configuration (stored state unreadable)"
    /// The app or the user, through ``PrivacyManager/enabledFeatures`` or `enableFeatures`/`disableFeatures`.
    case app
    /// A ``ConsentManager`` grant or refusal of a category that maps the flag
    /// (``FeatureReason/decidingCategory``).
    case consent
    /// Revoke-all, in this run or an earlier one: the user's refusal. The flag stays off, whatever the configuration
    /// and `resetEnabledFeatures` say, until the app or the user turns it on (or a consent grant of a category that
    /// maps it does).
    case revocation = "revoke-all"

    /// Whether the flag was decided, rather than following the configuration.
    public var isDecision: Bool {
        switch self {
        case .storedState, .app, .consent, .revocation: true
        case .configuration, .reset, .unreadableStoredState: false
        }
    }
}

/// The layer that holds a feature off.
public enum FeatureLayer: String, Sendable, Hashable, CaseIterable {
    /// The local value is off: decided off, or off in the configuration.
    case local
    /// Consent withholds it: a category that maps it does not allow processing.
    case consent
    /// The server's kill switch.
    case remote
}

/// Whether one flag is enabled, and why: `local ∩ permitted − remoteDisabled`, layer by layer.
public struct FeatureReason: Sendable, Hashable, CustomStringConvertible {
    /// The flag this explains.
    public let feature: Feature
    /// Whether the flag is in the effective set: locally on, permitted by consent and not remotely disabled.
    public var isEnabled: Bool { blockingLayers.isEmpty }
    /// Whether the local value (a decision, or the configuration) has the flag on.
    public let isLocallyEnabled: Bool
    /// Whether the remote kill switch has the flag off, whatever the local value.
    public let isRemotelyDisabled: Bool
    /// The rule or name of the server's payload that disabled the flag, such as `disable_features[1]` or
    /// `disabled_features[0] "push"`, when ``isRemotelyDisabled``.
    public let remoteRule: String?
    /// Who decided the local value.
    public let source: FeatureSource
    /// The category whose grant or refusal decided the local value, when ``source`` is ``FeatureSource/consent``.
    public let decidingCategory: ConsentCategory?
    /// The consent categories that withhold the flag, with their statuses. Empty when consent permits it.
    public let withholdingConsent: [ConsentCategory: ConsentStatus]
    /// Among ``withholdingConsent``, what blocks each category beyond its answer: the child mark or a Global Privacy
    /// Control signal. A category absent here is withheld by its answer (a refusal, or none under an opt-in rule).
    public let consentBlockers: [ConsentCategory: ConsentBlocker]
    /// Whether consent permits the flag.
    public var isPermitted: Bool { withholdingConsent.isEmpty }

    /// Every layer that holds the flag off, innermost first; empty when it is on.
    public var blockingLayers: [FeatureLayer] {
        var layers: [FeatureLayer] = []
        if !isLocallyEnabled { layers.append(.local) }
        if !isPermitted { layers.append(.consent) }
        if isRemotelyDisabled { layers.append(.remote) }
        return layers
    }

    /// Creates an explanation.
    public init(
        feature: Feature,
        isLocallyEnabled: Bool,
        isRemotelyDisabled: Bool,
        remoteRule: String? = nil,
        source: FeatureSource,
        decidingCategory: ConsentCategory? = nil,
        withholdingConsent: [ConsentCategory: ConsentStatus] = [:],
        consentBlockers: [ConsentCategory: ConsentBlocker] = [:]
    ) {
        self.feature = feature
        self.isLocallyEnabled = isLocallyEnabled
        self.isRemotelyDisabled = isRemotelyDisabled
        self.remoteRule = remoteRule
        self.source = source
        self.decidingCategory = decidingCategory
        self.withholdingConsent = withholdingConsent
        self.consentBlockers = consentBlockers
    }

    /// For example `analytics: off (consent withheld: analytics denied; locally on by analytics consent)`, or
    /// `push: off (remote kill switch: disable_features[0]; locally on by configuration)`, or
    /// `advertising granted (child)` when the child mark withholds a granted category.
    public var description: String {
        let name = FeatureCatalog.builtIn.names(of: feature).joined(separator: ", ")
        let decider = decidingCategory.map { "\($0) consent" } ?? source.rawValue
        var parts: [String] = []
        if isRemotelyDisabled { parts.append("remote kill switch" + (remoteRule.map { ": \($0)" } ?? "")) }
        if !isPermitted {
            let categories = withholdingConsent.sorted(byName: \.key.rawValue).map { category, status in
                "\(category) \(status.rawValue)" + (consentBlockers[category].map { " (\($0.phrase))" } ?? "")
            }
            parts.append("consent withheld: " + categories.joined(separator: ", "))
        }
        parts.append("locally \(isLocallyEnabled ? "on" : "off") by \(decider)")
        return "\(name): \(isEnabled ? "on" : "off") (\(parts.joined(separator: "; ")))"
    }
}

extension ConsentBlocker {
    /// How a reason names the blocker: `child`, `Global Privacy Control`, `region opt-in`.
    var phrase: String {
        switch self {
        case .child: "child"
        case .globalPrivacyControl: "Global Privacy Control"
        case .region: "opt-in region"
        }
    }
}

/// Who decided a feature's local value: the answer to "why is this feature off?".
public enum FeatureSource: String, Sendable, Hashable, CaseIterable {
    /// The configuration's `enabledFeatures`, because nothing was stored.
    case configuration
    /// The value stored by an earlier run, read at start-up.
    case storedState = "stored state"
    /// The configuration's `enabledFeatures`, because `resetEnabledFeatures` discarded the stored value.
    case reset
    /// The configuration's `enabledFeatures`, because the stored value could not be read (see the
    /// manager's ``PrivacyManager/startupDiagnostics``).
    case unreadableStoredState = "configuration (stored state unreadable)"
    /// The app or the user, through ``PrivacyManager/enabledFeatures`` or `enableFeatures`/`disableFeatures`.
    case app
}

/// Whether one flag is enabled, and why.
public struct FeatureReason: Sendable, Hashable, CustomStringConvertible {
    /// The flag this explains.
    public let feature: Feature
    /// Whether the flag is in the effective set: ``isLocallyEnabled`` and not ``isRemotelyDisabled``.
    public var isEnabled: Bool { isLocallyEnabled && !isRemotelyDisabled }
    /// Whether the app, the user or the configuration has the flag on.
    public let isLocallyEnabled: Bool
    /// Whether the remote kill switch has the flag off, whatever the local value.
    public let isRemotelyDisabled: Bool
    /// Who decided the local value.
    public let source: FeatureSource

    /// Creates an explanation.
    public init(feature: Feature, isLocallyEnabled: Bool, isRemotelyDisabled: Bool, source: FeatureSource) {
        self.feature = feature
        self.isLocallyEnabled = isLocallyEnabled
        self.isRemotelyDisabled = isRemotelyDisabled
        self.source = source
    }

    /// For example `analytics: off (remote kill switch; locally on by app)`.
    public var description: String {
        let name = FeatureCatalog.builtIn.names(of: feature).joined(separator: ", ")
        let local = "locally \(isLocallyEnabled ? "on" : "off") by \(source.rawValue)"
        if isRemotelyDisabled {
            return "\(name): off (remote kill switch; \(local))"
        }
        return "\(name): \(isEnabled ? "on" : "off") (\(local))"
    }
}

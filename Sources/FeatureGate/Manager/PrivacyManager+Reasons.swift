extension PrivacyManager {
    /// Explains each flag in `features`: its local value and who decided it, what consent withholds, and the kill
    /// switch.
    ///
    /// - Parameter features: The flags to explain; the default is every flag of the catalog.
    /// - Returns: One reason per flag, lowest bit first.
    public func reasons(for features: Feature? = nil) -> [FeatureReason] {
        let flags = (features ?? catalog.allFeatures).flags
        return state.withLock { state in flags.map { state.rules.reason(for: $0) } }
    }

    /// Explains why `features` are on or off: for one flag, its reason; for several, the reason of the first flag
    /// (lowest bit) that holds the set off, or of the lowest flag when all are on. Never traps.
    ///
    /// The empty set explains nothing: its reason names no flag and reads off, from the configuration. For every
    /// flag of a set, use ``reasons(for:)``.
    public func reason(for features: Feature) -> FeatureReason {
        let all = reasons(for: features)
        return all.first { !$0.isEnabled } ?? all.first
            ?? FeatureReason(feature: [], isLocallyEnabled: false, isRemotelyDisabled: false, source: .configuration)
    }
}

extension PrivacyManager {
    /// Whether any feature at all is enabled: ``isAnyEnabled(_:)`` for every flag. One atomic load.
    ///
    /// The one spelling of Airship's `isAnyFeatureEnabled()`.
    @inlinable
    public func isAnyEnabled() -> Bool {
        isAnyEnabled(Feature(rawValue: ~0))
    }
}

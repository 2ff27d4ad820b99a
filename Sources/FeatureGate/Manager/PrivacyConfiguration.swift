/// The features an app ships with, and whether they override what was stored.
///
/// The names mirror Airship's `AirshipConfig.enabledFeatures` and `resetEnabledFeatures`, so migrated code
/// and config files read the same. `FeatureGateConfig` builds one from a plist or JSON file.
public struct PrivacyConfiguration: Sendable, Hashable {
    /// The features enabled when nothing was stored, or when ``resetEnabledFeatures`` is true.
    ///
    /// For default-off consent, pass `[]` and enable features once the user agrees.
    public var enabledFeatures: Feature

    /// Whether to discard the stored features at start-up and use ``enabledFeatures`` instead.
    ///
    /// Set it for one release when an app update must change what is enabled for existing installs; the
    /// stored record is rewritten at start-up with no flag decided, keeping the user's refusals: its consent
    /// refusals (`FeatureStateRecord`'s `deniedConsentCategories`) and every flag a revoke-all turned off that
    /// nobody has turned on since (`revokedFeatures`), which stays off until the app or the user enables it or a
    /// consent grant of a category that maps it: a reset never lifts a user's "no". The rewrite is one
    /// read-modify-write under the store's lock, so a refusal another process saves meanwhile is kept too. A record
    /// written by a newer version is left as it is and reported
    /// (``PrivacyManagerDiagnostic/storedStateNewerNotReset(store:error:)``). Leave it `false` otherwise, or every
    /// launch forgets the user's choices.
    public var resetEnabledFeatures: Bool

    /// Creates a configuration.
    public init(enabledFeatures: Feature, resetEnabledFeatures: Bool = false) {
        self.enabledFeatures = enabledFeatures
        self.resetEnabledFeatures = resetEnabledFeatures
    }
}

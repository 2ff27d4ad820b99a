import FeatureGate

/// A config that was read successfully: the configuration, where it came from, and what was dropped.
public struct ConfigReadResult: Sendable, Hashable {
    /// The configuration to pass to `PrivacyManager`.
    ///
    /// Its features are never more than the file names: unknown names, retired names and unknown bits are
    /// dropped, and only `all` (or Airship-compatible mode's missing key) enables every flag of the catalog.
    public let configuration: PrivacyConfiguration
    /// The format the content was in, or `nil` when the source was an already-parsed dictionary.
    public let format: ConfigFormat?
    /// The file path or source name.
    public let source: String
    /// Warnings about what was dropped or defaulted, in document order. Empty for a clean file.
    public let warnings: [ConfigDiagnostic]
    /// The top-level keys the reader did not use (an `AirshipConfig.plist`'s `productionAppKey`, say), in document
    /// order.
    public let ignoredKeys: [String]
    /// The `consentPolicy` the file holds, ready for `PrivacyManager(consentPolicy:)` and `ConsentManager`, or `nil`
    /// when it has none.
    public let consentPolicy: ConsentPolicy?

    /// Creates a result.
    public init(
        configuration: PrivacyConfiguration,
        format: ConfigFormat?,
        source: String,
        warnings: [ConfigDiagnostic],
        ignoredKeys: [String] = [],
        consentPolicy: ConsentPolicy? = nil
    ) {
        self.configuration = configuration
        self.format = format
        self.source = source
        self.warnings = warnings
        self.ignoredKeys = ignoredKeys
        self.consentPolicy = consentPolicy
    }
}

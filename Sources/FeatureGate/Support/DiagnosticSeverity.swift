/// How serious a diagnostic is: whether what it is about can be used.
///
/// Every module's diagnostics that carry a severity use this one type (`FeatureGateConfig`'s `ConfigDiagnostic`,
/// `FeatureGateIAB`'s `CMPDiagnostic`), so a tool or an app that reports them handles one set of cases. The raw
/// values, `error` and `warning`, are what `featuregate` prints and writes in its JSON.
public enum DiagnosticSeverity: String, Sendable, Hashable, CaseIterable {
    /// What was read cannot be used: an invalid config file yields no configuration, a malformed consent signal
    /// grants nothing. Failing closed follows.
    case error
    /// What was read can be used, but something about it is worth knowing: a value dropped or defaulted (never
    /// widened), two readings of one signal that disagree.
    case warning
}

import FeatureGate
import FeatureGateConfig
import Testing

/// `ConfigDiagnostic.Severity` became `DiagnosticSeverity`, the one severity every module shares.
@Suite struct DiagnosticSeverityTests {
    /// The old name still compiles and is the shared type, not a twin of it.
    @available(*, deprecated)
    @Test func theOldNestedNameIsTheSharedType() {
        #expect(ConfigDiagnostic.Severity.self == DiagnosticSeverity.self)
    }

    /// `featuregate check` prints the raw values, and its JSON carries them: they stay `error` and `warning`.
    @Test func theRawValuesAreWhatTheToolPrints() {
        #expect(DiagnosticSeverity.allCases.map(\.rawValue) == ["error", "warning"])
        let diagnostic = ConfigDiagnostic(
            severity: .warning, kind: .unknownName, source: "c.json", keyPath: "enabledFeatures[0]", message: "m")
        #expect(diagnostic.description.hasPrefix("c.json: warning: "))
    }
}

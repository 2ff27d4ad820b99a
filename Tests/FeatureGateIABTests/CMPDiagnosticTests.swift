import FeatureGate
import FeatureGateIAB
import Testing

/// `CMPDiagnostic.Severity` became `DiagnosticSeverity`, the one severity every module shares.
@Suite struct CMPDiagnosticTests {
    /// The old name still compiles and is the shared type, not a twin of it.
    @available(*, deprecated)
    @Test func theOldNestedNameIsTheSharedType() {
        #expect(CMPDiagnostic.Severity.self == DiagnosticSeverity.self)
    }

    @Test func theDescriptionCarriesTheSharedSeveritysRawValue() {
        let diagnostic = CMPDiagnostic(severity: .error, key: "IABTCF_TCString", message: "malformed")
        #expect(diagnostic.description == "IABTCF_TCString: error: malformed")
    }
}

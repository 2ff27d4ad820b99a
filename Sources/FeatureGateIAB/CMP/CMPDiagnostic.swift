import FeatureGate

/// Something noticed while reading a CMP's keys: a malformed signal (which then grants nothing) or a note.
public struct CMPDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// How serious it is: the severity every FeatureGate module's diagnostics share.
    @available(*, deprecated, renamed: "DiagnosticSeverity")
    public typealias Severity = DiagnosticSeverity

    /// How serious it is: `.error` when a signal is malformed (the categories it covers read as unknown at best),
    /// `.warning` when a signal was read but something about it is worth knowing (the two TCF readings disagree).
    public var severity: DiagnosticSeverity
    /// The key the signal was read from.
    public var key: String
    /// What was found and what FeatureGate did.
    public var message: String

    /// Creates a diagnostic.
    public init(severity: DiagnosticSeverity, key: String, message: String) {
        self.severity = severity
        self.key = key
        self.message = message
    }

    /// `KEY: severity: message`.
    public var description: String {
        "\(UntrustedText.escaped(key)): \(severity.rawValue): \(UntrustedText.escaped(message, limit: .max))"
    }
}

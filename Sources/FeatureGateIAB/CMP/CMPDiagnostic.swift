import FeatureGate

/// Something noticed while reading a CMP's keys: a malformed signal (which then grants nothing) or a note.
public struct CMPDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// How serious it is.
    public enum Severity: String, Sendable, Hashable {
        /// A signal is malformed; the categories it covers read as unknown at best.
        case error
        /// A signal was read, but something about it is worth knowing (e.g. the two TCF readings disagree).
        case warning
    }

    /// How serious it is.
    public var severity: Severity
    /// The key the signal was read from.
    public var key: String
    /// What was found and what FeatureGate did.
    public var message: String

    /// Creates a diagnostic.
    public init(severity: Severity, key: String, message: String) {
        self.severity = severity
        self.key = key
        self.message = message
    }

    /// `KEY: severity: message`.
    public var description: String {
        "\(UntrustedText.escaped(key)): \(severity.rawValue): \(UntrustedText.escaped(message, limit: .max))"
    }
}

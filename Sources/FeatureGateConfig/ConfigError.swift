import Foundation

/// Why a config could not be read: every error found in it, with the warnings, and where it came from.
///
/// The reader keeps going after the first problem it can recover from, so one run reports every unknown name and
/// every wrong type in the file. A file that cannot be parsed at all has exactly one error. The convenience
/// properties (``keyPath``, ``found``, ``expected``, ``line``, ``suggestion``) describe the first error.
///
/// `localizedDescription` gives the full report, not Foundation's "the data couldn't be read".
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The file path or source name.
    public let source: String
    /// The detected format, or `nil` when it could not be told (an empty or unreadable file) or the source was a
    /// dictionary.
    public let format: ConfigFormat?
    /// Every error and warning, in document order. At least one is an error.
    public let diagnostics: [ConfigDiagnostic]

    /// Creates an error. `diagnostics` must hold at least one error.
    public init(source: String, format: ConfigFormat?, diagnostics: [ConfigDiagnostic]) {
        precondition(diagnostics.contains { $0.severity == .error }, "a ConfigError needs at least one error")
        self.source = source
        self.format = format
        self.diagnostics = diagnostics
    }

    /// The errors, in document order.
    public var errors: [ConfigDiagnostic] { diagnostics.filter { $0.severity == .error } }
    /// The warnings, in document order.
    public var warnings: [ConfigDiagnostic] { diagnostics.filter { $0.severity == .warning } }
    /// The first error.
    public var firstError: ConfigDiagnostic { diagnostics.first { $0.severity == .error }! }
    /// What kind of problem the first error is.
    public var kind: ConfigDiagnostic.Kind { firstError.kind }
    /// Where the first error is: `enabledFeatures[2]`, or `(root)` for the whole file.
    public var keyPath: String { firstError.keyPath }
    /// The line of the first error, when the format has lines and the parser knows it.
    public var line: Int? { firstError.line }
    /// What the first error found.
    public var found: String? { firstError.found }
    /// What the first error expected.
    public var expected: String? { firstError.expected }
    /// The closest valid name or key, when the first error is a likely misspelling.
    public var suggestion: String? { firstError.suggestion }

    /// One line per diagnostic, as `featuregate check` prints them.
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }

    /// The same as ``description``.
    public var errorDescription: String? { description }
}

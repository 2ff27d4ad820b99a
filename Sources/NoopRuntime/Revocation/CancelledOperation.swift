/// A call that a revocation cancelled because it did not finish in time.
public struct CancelledOperation: Sendable, Hashable, CustomStringConvertible {
    /// The subsystem's name, or the step of revoke-all (such as `"erasure request"`).
    public var subsystem: String
    /// What was cancelled: `"start"`, `"stop"`, `"purge"`, `"send"`.
    public var operation: String

    /// Creates an entry.
    public init(subsystem: String, operation: String) {
        self.subsystem = subsystem
        self.operation = operation
    }

    /// `analytics: stop`.
    public var description: String { "\(subsystem): \(operation)" }
}

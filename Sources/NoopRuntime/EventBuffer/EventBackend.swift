/// A destination for batches of events: an upload endpoint, a file queue, a second vendor.
///
/// A ``GatedEventBuffer`` delivers to each backend on its own: one that throws is retried with backoff and
/// keeps its batch for the next flush, while the others carry on. Implementations must be safe to call from
/// any thread; the buffer never calls one backend concurrently with itself.
public protocol EventBackend<Event>: Sendable {
    /// What the backend receives.
    associatedtype Event: Sendable

    /// A short name for flush reports.
    var name: String { get }

    /// Delivers `events`, oldest first, all or nothing: throw if any was not delivered.
    func deliver(_ events: [Event]) async throws
}

/// How often, and how patiently, a ``GatedEventBuffer`` retries a failing backend within one flush.
///
/// After failed attempt *n* (from 1) the buffer waits `initialDelay × multiplier^(n-1)`, capped at `maxDelay`,
/// then tries again, up to `maxAttempts` attempts in all.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts per flush, the first included; at least 1.
    public var maxAttempts: Int
    /// The wait after the first failure.
    public var initialDelay: Duration
    /// The factor between successive waits; at least 1.
    public var multiplier: Int
    /// The longest wait.
    public var maxDelay: Duration

    /// Creates a policy.
    ///
    /// - Precondition: `maxAttempts >= 1`, `multiplier >= 1`, delays not negative.
    public init(maxAttempts: Int, initialDelay: Duration, multiplier: Int = 2, maxDelay: Duration) {
        precondition(maxAttempts >= 1, "maxAttempts must be at least 1")
        precondition(multiplier >= 1, "multiplier must be at least 1")
        precondition(initialDelay >= .zero && maxDelay >= .zero, "delays cannot be negative")
        self.maxAttempts = maxAttempts
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
    }

    /// Three attempts, waiting 1 s then 2 s, never more than 30 s.
    public static let standard = RetryPolicy(maxAttempts: 3, initialDelay: .seconds(1), maxDelay: .seconds(30))

    /// The wait after failed attempt `attempt` (1 for the first).
    public func delay(afterFailedAttempt attempt: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(attempt, 1) {
            delay = delay * multiplier
            if delay >= maxDelay { return maxDelay }
        }
        return min(delay, maxDelay)
    }
}

import Foundation

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

    /// Delivers `batch`, oldest first, all or nothing: throw if any event was not delivered. Throw
    /// ``RetryAfterError`` when the server answered 429 or 503 with a `Retry-After`: the buffer then sends nothing
    /// more to this backend until it has passed.
    ///
    /// Delivery is at least once: a batch whose answer was lost is sent again. Implement this method (rather than
    /// `deliver(_ events: [Event])`, which the default implementation calls) to let the server drop the copies: send
    /// ``EventBatch/idempotencyKey`` (as an `Idempotency-Key` header, say), the same on every retry of an unchanged
    /// batch, and each event's ``IdentifiedEvent/id``, the same in every batch that carries the event.
    func deliver(_ batch: EventBatch<Event>) async throws
}

extension EventBackend {
    /// Delivers the batch's events without their identifiers: calls `deliver(_ events: [Event])`.
    public func deliver(_ batch: EventBatch<Event>) async throws {
        try await deliver(batch.events.map(\.event))
    }
}

/// An event as a ``GatedEventBuffer`` holds it: with the identifier it was given when tracked.
public struct IdentifiedEvent<Event: Sendable>: Sendable {
    /// A version 4 UUID that every batch carrying the event carries, so a server drops an event it has already
    /// seen by this identifier. Never derived from the event's data: a ``GatedEventBuffer`` derives it from the
    /// event's number and a random key it draws once (and again after every revocation), without a system call per
    /// event.
    public let id: UUID
    /// The event as tracked.
    public let event: Event

    /// Gives `event` the identifier `id` (a new random one, from Foundation's `UUID()`, unless given).
    public init(_ event: Event, id: UUID = UUID()) {
        self.id = id
        self.event = event
    }
}

extension IdentifiedEvent: Equatable where Event: Equatable {}
extension IdentifiedEvent: Hashable where Event: Hashable {}

/// What one delivery attempt hands a backend: events and the batch's idempotency key.
public struct EventBatch<Event: Sendable>: Sendable {
    /// A version 4 UUID for this batch, the same on every retry while the batch is unchanged (a retry in a later
    /// flush included). A batch that changes (the backlog overflowed into it) gets a new key; its events keep
    /// their identifiers. A ``GatedEventBuffer`` derives it as it derives event identifiers.
    public let idempotencyKey: UUID
    /// The events, oldest first.
    public let events: [IdentifiedEvent<Event>]

    /// A batch of `events` under `idempotencyKey` (a new random one, from Foundation's `UUID()`, unless given).
    public init(events: [IdentifiedEvent<Event>], idempotencyKey: UUID = UUID()) {
        self.idempotencyKey = idempotencyKey
        self.events = events
    }
}

extension EventBatch: Equatable where Event: Equatable {}
extension EventBatch: Hashable where Event: Hashable {}

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

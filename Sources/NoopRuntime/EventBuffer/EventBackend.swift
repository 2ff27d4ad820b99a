import FeatureGate
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

    /// Delivers `batch`, oldest first, all or nothing: throw if any element was not delivered. Throw
    /// ``RetryAfterError`` when the server answered 429 or 503 with a `Retry-After`: the buffer then sends nothing
    /// more to this backend until it has passed.
    ///
    /// Delivery is at least once: a batch whose answer was lost is sent again. Implement this method (rather than
    /// `deliver(_ events: [Event])`, which the default implementation calls) to let the server drop the copies: send
    /// ``EventBatch/idempotencyKey`` (as an `Idempotency-Key` header, say), the same on every retry of an unchanged
    /// batch, and each event's ``IdentifiedEvent/id``, the same in every batch that carries the event. Encode the
    /// body once, through ``EventBatch/encodedBody(_:)``, so every retry sends the same bytes. Send
    /// ``EventBatch/anonymousId`` with every element, so the server can link what it holds to revoke-all's erasure
    /// request, and each element's consent, so it can honour the decisions in force when the element was tracked.
    func deliver(_ batch: EventBatch<Event>) async throws
}

extension EventBackend {
    /// Delivers the batch's events without their identifiers, consent or anonymous identifier (and without its
    /// consent changes): calls `deliver(_ events: [Event])`.
    public func deliver(_ batch: EventBatch<Event>) async throws {
        try await deliver(batch.events.map(\.event))
    }
}

/// An event as a ``GatedEventBuffer`` holds it: with the identifier it was given and the consent and user in force
/// when it was tracked.
public struct IdentifiedEvent<Event: Sendable>: Sendable {
    /// A version 4 UUID that every batch carrying the event carries, so a server drops an event it has already
    /// seen by this identifier. Never derived from the event's data: a ``GatedEventBuffer`` derives it from the
    /// event's number and a random key it draws once (and again after every revocation), without a system call per
    /// event.
    public let id: UUID
    /// The event as tracked.
    public let event: Event
    /// The consent decisions in force when the event was tracked (empty when the buffer follows no consent).
    public let consent: ConsentPreferences
    /// The SDK's user identifier when the event was tracked (``GatedEventBuffer/userId``), if it set one.
    public let userId: String?

    /// Gives `event` the identifier `id` (a new random one, from Foundation's `UUID()`, unless given), the consent
    /// in force and the user identifier.
    public init(_ event: Event, id: UUID = UUID(), consent: ConsentPreferences = .none, userId: String? = nil) {
        self.id = id
        self.event = event
        self.consent = consent
        self.userId = userId
    }
}

extension IdentifiedEvent: Equatable where Event: Equatable {}
extension IdentifiedEvent: Hashable where Event: Hashable {}

/// What one delivery attempt hands a backend: its elements (events and consent changes, oldest first), the
/// install's anonymous identifier, and the batch's idempotency key.
public struct EventBatch<Event: Sendable>: Sendable {
    /// One element of a batch.
    public enum Element: Sendable {
        /// An event as tracked.
        case event(IdentifiedEvent<Event>)
        /// A consent change, in order with the events (see ``ConsentPreferenceUpdate``).
        case consentPreferenceUpdated(ConsentPreferenceUpdate)

        /// The event, or `nil` for a consent change.
        public var event: IdentifiedEvent<Event>? {
            if case .event(let event) = self { return event }
            return nil
        }

        /// The element's identifier.
        public var id: UUID {
            switch self {
            case .event(let event): event.id
            case .consentPreferenceUpdated(let update): update.id
            }
        }
    }

    /// A version 4 UUID for this batch, the same on every retry while the batch is unchanged (a retry in a later
    /// flush included). A batch that changes (the backlog overflowed into it) gets a new key; its events keep
    /// their identifiers. A ``GatedEventBuffer`` derives it as it derives event identifiers.
    public let idempotencyKey: UUID
    /// The elements, oldest first.
    public let elements: [Element]
    /// The install's anonymous identifier, the one revoke-all's erasure request names: every element of the
    /// batch belongs to it. A ``GatedEventBuffer`` given an `AnonymousIdentifier` sets it when the batch is made
    /// (`PrivacyStack.eventBuffer` gives it the stack's); `nil` otherwise.
    public let anonymousId: UUID?
    /// The request body, once a backend encoded it: shared by every copy of the batch, so a retry sends the same
    /// bytes (see ``encodedBody(_:)``).
    private let body: EncodedBody

    /// The events, oldest first, without the consent changes.
    public var events: [IdentifiedEvent<Event>] { elements.compactMap(\.event) }

    /// A batch of `events` under `idempotencyKey` (a new random one, from Foundation's `UUID()`, unless given).
    public init(events: [IdentifiedEvent<Event>], idempotencyKey: UUID = UUID(), anonymousId: UUID? = nil) {
        self.init(elements: events.map(Element.event), idempotencyKey: idempotencyKey, anonymousId: anonymousId)
    }

    /// A batch of `elements` under `idempotencyKey` (a new random one, from Foundation's `UUID()`, unless given).
    public init(elements: [Element], idempotencyKey: UUID = UUID(), anonymousId: UUID? = nil) {
        self.idempotencyKey = idempotencyKey
        self.elements = elements
        self.anonymousId = anonymousId
        self.body = EncodedBody()
    }

    /// The batch's request body: `encode`'s result on the first call, the same bytes on every later call, from any
    /// copy of the batch (the buffer retries a failed batch as the same value, in this flush or a later one).
    ///
    /// Call it from the batch form of `EventBackend.deliver(_:)` so that every retry under the batch's
    /// ``idempotencyKey`` is byte for byte the same request: a server that fingerprints the body under the key (as
    /// the IETF idempotency-key draft and Stripe do) refuses a retry whose bytes differ. A batch goes to one backend
    /// only, so one encoding is all it needs. When `encode` throws, nothing is kept and the error is rethrown.
    public func encodedBody(_ encode: () throws -> Data) rethrows -> Data {
        try body.value.withLock { stored in
            if let stored { return stored }
            let encoded = try encode()
            stored = encoded
            return encoded
        }
    }
}

/// The bytes of a batch's body, shared by the batch's copies; not part of its value (equality ignores it).
private final class EncodedBody: Sendable {
    let value = LockedValue<Data?>(nil)
}

extension EventBatch.Element: Equatable where Event: Equatable {}
extension EventBatch.Element: Hashable where Event: Hashable {}

extension EventBatch: Equatable where Event: Equatable {
    /// Equal keys, anonymous identifiers and elements; the encoded body is not compared.
    public static func == (left: EventBatch, right: EventBatch) -> Bool {
        left.idempotencyKey == right.idempotencyKey && left.anonymousId == right.anonymousId
            && left.elements == right.elements
    }
}

extension EventBatch: Hashable where Event: Hashable {
    /// Hashes the key, the anonymous identifier and the elements.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(idempotencyKey)
        hasher.combine(anonymousId)
        hasher.combine(elements)
    }
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

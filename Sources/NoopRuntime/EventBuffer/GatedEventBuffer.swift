import FeatureGate
import Foundation

/// A bounded in-memory queue of events that reaches its backends only while its features are enabled.
///
/// - ``track(_:)`` refuses every event while the gate is closed, with a typed error, without allocating.
/// - While open, events wait in memory. When ``capacity`` is reached the oldest is dropped and counted in
///   ``droppedCount``.
/// - ``flush()`` hands the waiting events to every backend, each on its own: a failing backend is retried
///   with exponential backoff (``RetryPolicy``) and keeps its batch for the next flush, without holding the
///   others back. Each backend's backlog is bounded by ``capacity`` too.
/// - When the gate is closed, ``flush()`` purges instead of delivering, and ``purge()`` drops everything; the
///   owning subsystem calls it on the enabled → disabled edge. The buffer itself never persists anything: only
///   backends do, and they are called only while the gate is open.
///
/// ## Revocation is final
/// The buffer follows the gate itself: on every change that closes it, everything queued (in memory and in the
/// backlogs) is revoked at once, before any purge, and counted by the next ``purge()``. A flush under way checks,
/// before each attempt, that the gate is open *and* that no revocation or purge happened since it took its
/// batches; otherwise it abandons them. So nothing captured before a revocation reaches a backend after it, even
/// if the gate opens again during a backoff wait. A backend call already under way may finish.
///
/// ## Cancellation
/// Cancelling the task running ``flush()`` (a stopping subsystem does) ends it at once: pending retries are
/// dropped, the backoff wait ends, and a backend call under way is cancelled and no longer waited for, even if
/// the backend ignores cancellation. The undelivered batches go back to their backlogs (unless revoked).
///
/// ## Bounded
/// A flush returns within ``flushDeadline`` (30 s unless given), whatever its backends do: when it passes, the
/// backend calls under way are cancelled and no longer waited for, and their batches go back to the backlogs
/// (``BackendDelivery/Result/cancelled``). Backends run on tasks of their own; a backend must not make blocking
/// calls on Swift's concurrency threads (use `URLSessionTransport`, or move blocking I/O to a thread of its own).
///
/// ## Servers that fail
/// A backend that throws ``RetryAfterError`` (its server answered 429 or 503 with `Retry-After`) gets no further
/// attempt, in this flush or a later one, until the wait has passed (at most `RetryAfter.maximum`); its batch
/// waits in its backlog.
///
/// Delivery is at least once: a batch whose answer was lost (the server took it, the connection dropped) is sent
/// again. So that a backend can drop the copies, every event has an identifier (``IdentifiedEvent/id``), fixed
/// when it is tracked and derived from a random key the buffer draws once (no system call per event, nothing of
/// the event's data), carried by every batch that holds it, and every batch an idempotency key
/// (``EventBatch/idempotencyKey``) that a retry reuses: a batch that failed is retried alone and unchanged, before
/// newer events, which follow in a batch of their own. See the batch form of `EventBackend.deliver(_:)` and
/// <doc:ServersThatFail>.
///
/// The sleeper and the clock are injected so tests can run the backoff and `Retry-After` without waiting.
///
/// Thread safety: every method may be called from any thread; flushes do not overlap (a flush that finds
/// another under way returns at once).
public final class GatedEventBuffer<Event: Sendable>: Sendable {
    /// Waits for a duration; the buffer's only notion of time.
    public typealias Sleeper = @Sendable (Duration) async -> Void

    /// The features that must all be enabled for the buffer to accept and deliver events.
    public let features: Feature
    /// The most events held in memory, and the most each backend's backlog holds.
    public let capacity: Int
    /// How failing backends are retried.
    public let retryPolicy: RetryPolicy
    /// The longest a ``flush()`` takes: then the backend calls under way are cancelled.
    public let flushDeadline: Duration

    @usableFromInline let privacy: PrivacyManager
    @usableFromInline let ledger: IOCounter
    private let backends: [any EventBackend<Event>]
    let sleep: Sleeper
    private let now: @Sendable () -> Double
    @usableFromInline let state: LockedValue<State>
    private let observation: ObservationToken

    /// Creates an empty buffer. It allocates its ring of `capacity` slots and does nothing else.
    ///
    /// - Parameters:
    ///   - features: The features that must all be enabled; not empty.
    ///   - capacity: The bound on waiting events, at least 1.
    ///   - privacy: The gate.
    ///   - backends: Where flushes deliver, each independently.
    ///   - retryPolicy: How failing backends are retried within one flush.
    ///   - counter: Counts accepted and refused events (the default counts for no one).
    ///   - sleep: Waits between attempts; the default is `Task.sleep(for:)`.
    ///   - flushDeadline: The longest a flush takes (on the system's clock); positive. The default is 30 seconds.
    ///   - now: A monotonic clock in seconds, for `Retry-After`; the default is the system's continuous clock.
    public init(
        features: Feature,
        capacity: Int,
        privacy: PrivacyManager,
        backends: [any EventBackend<Event>],
        retryPolicy: RetryPolicy = .standard,
        counter: IOCounter = IOCounter(),
        sleep: @escaping Sleeper = { try? await Task.sleep(for: $0) },
        flushDeadline: Duration = .seconds(30),
        now: (@Sendable () -> Double)? = nil
    ) {
        precondition(!features.isEmpty, "a gated event buffer needs at least one feature")
        precondition(capacity >= 1, "capacity must be at least 1")
        precondition(flushDeadline > .zero, "the flush deadline must be positive")
        self.flushDeadline = flushDeadline
        self.now = now ?? RetryAfter.monotonicSeconds()
        self.features = features
        self.capacity = capacity
        self.privacy = privacy
        self.backends = backends
        self.retryPolicy = retryPolicy
        self.ledger = counter
        self.sleep = sleep
        let state = LockedValue(
            State(
                capacity: capacity, backendCount: backends.count, seenDisables: privacy.disableCount(of: features),
                identifiers: EventIdentifiers()))
        self.state = state
        // Revocation does not wait for the owner's purge: a disable closes every batch captured before it. The
        // observer may be told late (another thread still delivering older changes), so every path that keeps or
        // hands out events also catches up with the gate's revocation counter itself; each revocation is applied
        // once, whoever sees it first.
        self.observation = privacy.observe { change in
            if !change.disabled.isDisjoint(with: features) {
                state.withLock { $0.catchUp(disables: privacy.disableCount(of: features)) }
            }
        }
    }

    /// Whether the buffer accepts and delivers events right now.
    @inlinable public var isOpen: Bool { privacy.isEnabled(features) }

    /// Queues `event` if the gate is open.
    ///
    /// With the gate open: one lock, no allocation, no system call (the identifier is made when the event leaves
    /// the ring for a batch).
    ///
    /// - Throws: ``GatedIOError/gateClosed(_:)`` when closed: nothing is kept, nothing allocated, the refusal is
    ///   counted in the ledger.
    @inlinable
    public func track(_ event: Event) throws(GatedIOError) {
        guard privacy.isEnabled(features), append(event, disablesAtCall: privacy.disableCount(of: features)) else {
            ledger.record(.event, .refused, for: features)
            throw .gateClosed(features)
        }
        ledger.record(.event, .allowed, for: features)
    }

    /// Appends under the lock, checking the gate again there so that no event slips in after a purge that
    /// followed the gate closing, nor one whose `track` call began before a revocation that has since been undone
    /// (`disablesAtCall` is the revocation counter read just after the call found the gate open).
    /// One lock, no system call: the event's identifier is its number, made a UUID when it leaves the ring.
    /// Inlined into the caller's module, so it runs specialized for `Event`.
    @inlinable
    func append(_ event: Event, disablesAtCall: UInt64) -> Bool {
        state.withLock { state in
            guard privacy.isEnabled(features) else { return false }
            let disables = privacy.disableCount(of: features)
            state.catchUp(disables: disables)
            guard disables == disablesAtCall else { return false }
            state.push(event, capacity: capacity)
            return true
        }
    }

    /// Events waiting in memory, not yet handed to the backends.
    public var bufferedCount: Int { state.withLock { $0.count } }

    /// Events dropped because the buffer, or a backend's backlog, was full. Purges are not drops.
    public var droppedCount: Int { state.withLock { $0.dropped } }

    /// Queued events dropped by purges so far.
    public var purgedCount: Int { state.withLock { $0.purged } }

    /// Events waiting for each backend after failed deliveries, by backend name.
    public var backlogs: [String: Int] {
        state.withLock { state in
            var result: [String: Int] = [:]
            for (index, backend) in backends.enumerated() {
                let failed = state.failed[index]?.events.count ?? 0
                result[backend.name, default: 0] += state.backlog[index].count + failed
            }
            return result
        }
    }

    /// Drops everything queued, in memory and in the backends' backlogs, and returns how many entries went.
    ///
    /// An event waiting for two backends counts twice. Entries that a closing gate revoked since the last purge
    /// count here too. Events that a flush is delivering at that moment are not
    /// counted here: each is either delivered or, when the flush ends, purged and reported by the flush. Never
    /// touches a backend.
    @discardableResult
    public func purge() -> Int {
        state.withLock { $0.purgeAll() }
    }

    /// Delivers the waiting events to every backend while the gate is open; purges them when it is closed.
    ///
    /// Backends are tried concurrently, each with its own retries. A backend whose attempts all fail keeps its
    /// batch for the next flush. If the gate closes (or a purge runs) during the flush, pending retries are
    /// abandoned, even if the gate opens again before them, and everything queued is purged. If the calling
    /// task is cancelled, the flush returns at once (see the type's "Cancellation").
    public func flush() async -> FlushReport {
        guard privacy.isEnabled(features) else {
            return FlushReport(outcome: .purged, purgedEvents: purge())
        }
        let time = now()
        let taken: (generation: UInt64, batches: [[EventBatch<Event>]], held: [BackendDelivery?])? = state.withLock {
            state in
            guard !state.isFlushing else { return nil }
            state.catchUp(disables: privacy.disableCount(of: features))
            state.isFlushing = true
            state.moveBufferToBacklogs(capacity: capacity)
            // The batches leave the backlogs while in flight, so a purge meanwhile cannot count them too. A backend
            // the server asked to wait keeps its events where they are, and gets no attempt.
            var batches: [[EventBatch<Event>]] = []
            var held: [BackendDelivery?] = []
            for index in state.backlog.indices {
                let waiting = (state.failed[index]?.events.count ?? 0) + state.backlog[index].count
                if time < state.notBefore[index] {
                    batches.append([])
                    let seconds = Int((state.notBefore[index] - time).rounded(.up))
                    held.append(
                        waiting == 0
                            ? nil
                            : BackendDelivery(
                                backend: backends[index].name, events: waiting, attempts: 0, delays: [],
                                result: .failed("the server asked to retry after \(seconds) s more (Retry-After)")))
                    continue
                }
                var list: [EventBatch<Event>] = []
                if let failed = state.failed[index] { list.append(failed) }
                if !state.backlog[index].isEmpty { list.append(state.newBatch(state.backlog[index])) }
                state.failed[index] = nil
                state.backlog[index] = []
                batches.append(list)
                held.append(nil)
            }
            return (state.generation, batches, held)
        }
        guard let taken else { return FlushReport(outcome: .alreadyFlushing) }

        let work = Task { [self] in
            await withTaskGroup(of: (Int, Delivered).self) { group in
                for (index, backend) in backends.enumerated() where !taken.batches[index].isEmpty {
                    let batches = taken.batches[index]
                    group.addTask { (index, await self.deliver(batches, to: backend, generation: taken.generation)) }
                }
                var results: [(Int, Delivered)] = []
                for await result in group { results.append(result) }
                return results.sorted { $0.0 < $1.0 }
            }
        }
        // Bounded: past the deadline (or when this task is cancelled) the deliveries are cancelled, which ends
        // them at once (a backend call under way is no longer waited for).
        let deliveries = await withTaskCancellationHandler {
            if let done = await Abandonable.value(
                of: work, within: flushDeadline, sleep: { try? await Task.sleep(for: $0) })
            {
                return done
            }
            work.cancel()
            return await work.value
        } onCancel: {
            work.cancel()
        }

        let finished = now()
        let purgedInFlight = state.withLock { state in
            state.isFlushing = false
            var purged = 0
            for (index, outcome) in deliveries {
                let batches = taken.batches[index]
                let undelivered = batches[outcome.deliveredBatches...]
                if let retryAfter = outcome.retryAfter { state.notBefore[index] = finished + retryAfter }
                guard let first = undelivered.first else { continue }
                // Undelivered events go back to their backlog, unless the gate closed or a purge ran meanwhile:
                // then they are purged too. The first undelivered batch is retried as it is, under its key.
                if state.generation != taken.generation || outcome.delivery.result == .abandonedGateClosed {
                    purged += undelivered.reduce(0) { $0 + $1.events.count }
                } else {
                    state.failed[index] = first
                    state.backlog[index].insert(contentsOf: undelivered.dropFirst().flatMap(\.events), at: 0)
                    state.trimBacklog(index, capacity: capacity)
                }
            }
            state.purged += purged
            return purged
        }
        var all = deliveries.map { ($0.0, $0.1.delivery) }
        for (index, delivery) in taken.held.enumerated() {
            if let delivery { all.append((index, delivery)) }
        }
        var report = FlushReport(
            outcome: .flushed, backends: all.sorted { $0.0 < $1.0 }.map(\.1), purgedEvents: purgedInFlight)
        if !privacy.isEnabled(features) { report.purgedEvents += purge() }
        return report
    }
}

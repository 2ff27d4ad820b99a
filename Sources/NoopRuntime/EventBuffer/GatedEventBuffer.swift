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
/// ## What leaves with each event
/// A server can honour the user only with what it receives. Given the install's `AnonymousIdentifier`, the buffer
/// puts it on every batch it makes (``EventBatch/anonymousId``): the identifier revoke-all's erasure request names,
/// read (created on first use) when a flush makes a batch, never in `track`. Given the `ConsentManager`, each event
/// keeps the consent decisions in force when it was tracked (``IdentifiedEvent/consent``), and every consent change
/// the manager applies while the buffer is open queues a ``ConsentPreferenceUpdate`` in order with the events; a
/// change that closes the buffer's features queues nothing. ``userId``, when the SDK sets one, goes with every
/// event tracked while it is set. `PrivacyStack.eventBuffer` wires the stack's identifier and consent manager.
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
    /// The install's anonymous identifier that every batch names, or `nil` when the buffer was given none.
    public let identifier: AnonymousIdentifier?

    private let backends: [any EventBackend<Event>]
    let sleep: Sleeper
    private let now: @Sendable () -> Double
    @usableFromInline let state: LockedValue<State>
    private let observation: ObservationToken
    private let consentObservation: ObservationToken?

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
    ///   - consent: The consent manager over `privacy` whose decisions each event keeps (taken when it is tracked)
    ///     and whose changes are queued as ``ConsentPreferenceUpdate`` elements; `nil` for none.
    ///   - identifier: The install's anonymous identifier, put on every batch (``EventBatch/anonymousId``);
    ///     `nil` for none. ``UploadBackend`` sends nothing without it.
    public init(
        features: Feature,
        capacity: Int,
        privacy: PrivacyManager,
        backends: [any EventBackend<Event>],
        retryPolicy: RetryPolicy = .standard,
        counter: IOCounter = IOCounter(),
        sleep: @escaping Sleeper = { try? await Task.sleep(for: $0) },
        flushDeadline: Duration = .seconds(30),
        now: (@Sendable () -> Double)? = nil,
        consent: ConsentManager? = nil,
        identifier: AnonymousIdentifier? = nil
    ) {
        precondition(!features.isEmpty, "a gated event buffer needs at least one feature")
        precondition(consent.map { $0.privacy === privacy } ?? true, "the consent manager must be over the same gate")
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
        self.identifier = identifier
        let state = LockedValue(
            State(
                capacity: capacity, backendCount: backends.count, seenDisables: privacy.disableCount(of: features),
                identifiers: EventIdentifiers(),
                consent: consent == nil ? .none : ConsentPreferences(statuses: privacy.consentStatuses)))
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
        // Called on the consent manager's executor right after each change was applied to the gate: the decisions
        // are read from the gate then (so a change missed between the read above and this registration is caught by
        // the next), and the change queued if the buffer is still open.
        self.consentObservation = consent?.observe { _ in
            let preferences = ConsentPreferences(statuses: privacy.consentStatuses)
            let disablesAtCall = privacy.disableCount(of: features)
            state.withLock { state in
                state.consent = preferences
                guard privacy.isEnabled(features) else { return }
                let disables = privacy.disableCount(of: features)
                state.catchUp(disables: disables)
                guard disables == disablesAtCall else { return }
                state.push(.consent(preferences, state.userId), capacity: capacity)
            }
        }
    }

    /// The SDK's user identifier (a login, an account number), sent with every event tracked while it is set and
    /// with every consent change; `nil` (the default) for none.
    ///
    /// Set it when the user signs in and to `nil` when they sign out: events already tracked keep the value they
    /// were tracked with. A revocation of the buffer's features forgets it, as it forgets everything captured
    /// before it: set it again once they are back on.
    public var userId: String? {
        get { state.withLock { $0.userId } }
        set { state.withLock { $0.userId = newValue } }
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
            state.push(.event(event, state.consent, state.userId), capacity: capacity)
            return true
        }
    }

    /// Entries (events and consent changes) waiting in memory, not yet handed to the backends.
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
                let failed = state.failed[index]?.elements.count ?? 0
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
        // Read (or created) before the batches are made, outside the lock: every batch names it. Without it no batch
        // is made, and the entries wait for the next flush.
        var anonymousId: UUID?
        // A revocation after this reading may have reset the identifier read below: new batches then wait.
        let disablesBefore = privacy.disableCount(of: features)
        if let identifier, hasWaitingEntries {
            do {
                anonymousId = try identifier.current()
            } catch {
                return identifierUnavailable(error)
            }
            guard anonymousId != nil else {
                // Every feature went off meanwhile (the identifier exists only while one is on).
                guard privacy.isEnabled(features) else { return FlushReport(outcome: .purged, purgedEvents: purge()) }
                return identifierUnavailable(AnonymousIdentifierMissing())
            }
        }
        let time = now()
        let taken: (generation: UInt64, batches: [[EventBatch<Event>]], held: [BackendDelivery?])? = state.withLock {
            state in
            guard !state.isFlushing else { return nil }
            let disables = privacy.disableCount(of: features)
            state.catchUp(disables: disables)
            let isIdentifierStale = identifier != nil && (disables != disablesBefore || anonymousId == nil)
            state.isFlushing = true
            state.moveBufferToBacklogs(capacity: capacity)
            // The batches leave the backlogs while in flight, so a purge meanwhile cannot count them too. A backend
            // the server asked to wait keeps its events where they are, and gets no attempt.
            var batches: [[EventBatch<Event>]] = []
            var held: [BackendDelivery?] = []
            for index in state.backlog.indices {
                let waiting = (state.failed[index]?.elements.count ?? 0) + state.backlog[index].count
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
                state.failed[index] = nil
                if !state.backlog[index].isEmpty && !isIdentifierStale {
                    list.append(state.newBatch(state.backlog[index], anonymousId: anonymousId))
                    state.backlog[index] = []
                }
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
                    purged += undelivered.reduce(0) { $0 + $1.elements.count }
                } else {
                    state.failed[index] = first
                    state.backlog[index].insert(contentsOf: undelivered.dropFirst().flatMap(\.elements), at: 0)
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

    /// Whether anything waits, in the ring, a backlog or a failed batch.
    private var hasWaitingEntries: Bool {
        state.withLock { state in
            state.count > 0 || state.backlog.contains { !$0.isEmpty } || state.failed.contains { $0 != nil }
        }
    }

    /// A flush that made no batch because the anonymous identifier could not be read or stored: each backend with
    /// entries waiting is reported as failed, with nothing attempted; the entries wait for the next flush.
    private func identifierUnavailable(_ error: any Error) -> FlushReport {
        let waiting: [BackendDelivery] = state.withLock { state in
            backends.indices.compactMap { index in
                let count = state.count + (state.failed[index]?.elements.count ?? 0) + state.backlog[index].count
                guard count > 0 else { return nil }
                return BackendDelivery(
                    backend: backends[index].name, events: count, attempts: 0, delays: [],
                    result: .failed("the anonymous identifier could not be read: \(error)"))
            }
        }
        return FlushReport(outcome: .flushed, backends: waiting)
    }
}

/// The anonymous identifier was not there when a flush made its batches: every feature went off meanwhile.
struct AnonymousIdentifierMissing: Error, CustomStringConvertible {
    var description: String { "no feature is enabled, so no anonymous identifier exists" }
}

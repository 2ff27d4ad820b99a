import FeatureGate
import Foundation

/// A ``Storage`` that reaches the SDK's real store only while its features are enabled.
///
/// Every call checks the gate first (one atomic load). While any of ``features`` is disabled, the call throws
/// ``GatedIOError/gateClosed(_:)`` without touching the inner store and without allocating, and the refusal is
/// counted in the ledger. While open, the call goes to the inner store and is counted as allowed.
///
/// ``purge()`` is the exception: it deletes through a closed gate, because a purge runs right after the gate
/// closes. It is counted as a purge, not as storage.
///
/// ## Writes in flight
/// A write admitted just before the gate closed may still be running when the purge comes. The purge waits for
/// such writes (up to ``purgeWaitLimit``) before deleting, so the store is empty when it returns; a write that
/// lands after a purge began deletes what it wrote and throws ``GatedIOError/gateClosed(_:)``. If writes are still
/// running when the wait ends, the purge throws, so the owner reports it and is purged again later.
public struct GatedStorage: Sendable {
    /// How long ``purge()`` waits for writes admitted before it to finish.
    public static let purgeWaitLimit: Duration = .seconds(2)

    /// The features that must all be enabled for a call to go through.
    public let features: Feature
    @usableFromInline let privacy: PrivacyManager
    @usableFromInline let inner: any Storage
    @usableFromInline let ledger: IOCounter
    @usableFromInline let writes = WritesInFlight()

    /// Wraps `inner`, gated on `features` (all of them) of `privacy`, counting into `counter` (pass one you keep to
    /// read the counts; the default counts for no one).
    ///
    /// - Precondition: `features` is not empty.
    public init(
        _ inner: any Storage, features: Feature, privacy: PrivacyManager, counter: IOCounter = IOCounter()
    ) {
        precondition(!features.isEmpty, "a gated storage needs at least one feature")
        self.inner = inner
        self.features = features
        self.privacy = privacy
        self.ledger = counter
    }

    /// Whether calls go through right now.
    @inlinable public var isOpen: Bool { privacy.isEnabled(features) }

    /// Checks the gate and counts the outcome. Allocation-free.
    @inlinable
    func admit() throws(GatedIOError) {
        try ledger.admit(.storage, features, of: privacy)
    }

    /// Reads the blob `name` from the inner store, if the gate is open.
    @inlinable
    public func read(_ name: String) throws(GatedIOError) -> Data? {
        try admit()
        do { return try inner.read(name) } catch { throw .failed(error) }
    }

    /// Writes `data` as `name` to the inner store, if the gate is open.
    ///
    /// The write is tracked while it runs: a ``purge()`` that begins meanwhile waits for it, and if it lands
    /// after a purge began it deletes `name` again and throws ``GatedIOError/gateClosed(_:)``.
    ///
    /// Over a ``FileStorage`` (or any store that writes through the package's files), the gate is checked again
    /// once the data directory's lock is held, after the take-aways other processes made durable without it are
    /// folded and the gate state is read again: a "no" that returned in any process before the write took the lock
    /// refuses it (``GatedIOError/gateClosed(_:)``), so no write lands after it.
    public func write(_ data: Data, to name: String) throws(GatedIOError) {
        try admit()
        // Admission and registration are one step under the tracker's lock, so a purge either sees this write
        // or this write sees the closed gate.
        guard let generation = writes.begin(whileOpen: { privacy.isEnabled(features) }) else {
            throw .gateClosed(features)
        }
        defer { writes.end(generation) }
        let (gate, gated) = (privacy, features)
        let admission = WriteAdmission {
            gate.reloadStoredState()
            return gate.isEnabled(gated)
        }
        do {
            try AtomicFile.$admission.withValue(admission) { try inner.write(data, to: name) }
        } catch  where AtomicFile.isRefusedUnderLock(error) {
            throw .gateClosed(features)
        } catch {
            throw .failed(error)
        }
        if writes.generation != generation {
            _ = try? inner.remove(name)
            throw .gateClosed(features)
        }
    }

    /// Writes admitted and not yet finished.
    public var writesInFlight: Int { writes.count }

    /// Removes the blob `name` from the inner store, if the gate is open.
    @inlinable
    @discardableResult
    public func remove(_ name: String) throws(GatedIOError) -> Bool {
        try admit()
        do { return try inner.remove(name) } catch { throw .failed(error) }
    }

    /// Deletes everything in the inner store, whatever the gate says; returns the names deleted.
    ///
    /// Call it on an enabled → disabled edge (from ``Subsystem/purge()``). It is counted as one purge.
    ///
    /// Writes admitted before the purge began are waited for first (see "Writes in flight").
    ///
    /// - Throws: ``GatedIOError/failed(_:)`` with the inner store's error, or with ``GatedStorage/WritesStillInFlight`` when
    ///   writes were still running after ``purgeWaitLimit`` (whatever they write, they delete again).
    public func purge() throws(GatedIOError) -> [String] {
        ledger.record(.purge, .allowed, for: features)
        let unfinished = writes.purgeBegins(waitingAtMost: Self.purgeWaitLimit)
        let removed: [String]
        do { removed = try inner.removeAll() } catch { throw .failed(error) }
        if unfinished > 0 { throw .failed(GatedStorage.WritesStillInFlight(count: unfinished, removed: removed)) }
        return removed
    }
}

extension GatedStorage {
    /// A purge ended while writes admitted before it were still running.
    ///
    /// Each of those writes deletes what it wrote when it lands; the purge is reported as incomplete so that the
    /// owner is purged again.
    public struct WritesStillInFlight: Error, Sendable, Hashable, CustomStringConvertible {
        /// How many writes were still running.
        public let count: Int
        /// What the purge deleted all the same.
        public let removed: [String]

        /// `2 writes still in flight after the purge`.
        public var description: String { "\(count) write\(count == 1 ? "" : "s") still in flight after the purge" }
    }
}

/// Counts a storage's writes in flight, per purge generation.
@usableFromInline
final class WritesInFlight: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var running: [UInt64: Int] = [:]
    }
    private let state = LockedValue(State())

    @usableFromInline init() {}

    /// Registers a write if `isOpen()` holds at that moment; returns its generation, or `nil` when refused.
    @usableFromInline
    func begin(whileOpen isOpen: () -> Bool) -> UInt64? {
        state.withLock { state in
            guard isOpen() else { return nil }
            state.running[state.generation, default: 0] += 1
            return state.generation
        }
    }

    @usableFromInline
    func end(_ generation: UInt64) {
        state.withLock { state in
            let left = (state.running[generation] ?? 1) - 1
            state.running[generation] = left > 0 ? left : nil
        }
    }

    @usableFromInline var generation: UInt64 { state.withLock { $0.generation } }

    var count: Int { state.withLock { $0.running.values.reduce(0, +) } }

    /// Starts a new generation, then waits until the writes of earlier ones finish or `limit` passes; returns
    /// how many are still running.
    func purgeBegins(waitingAtMost limit: Duration) -> Int {
        let before = state.withLock { state in
            state.generation += 1
            return state.generation
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        while true {
            let running = state.withLock { state in
                state.running.filter { $0.key < before }.values.reduce(0, +)
            }
            if running == 0 || clock.now >= deadline { return running }
            // Writes are short synchronous calls on other threads: poll briefly rather than park.
            usleep(200)
        }
    }
}

// MARK: - Observation
//
// One way for each job: `updates` follows the effective set from async code (current set first);
// `readAndObserve(_:)` follows it from synchronous code (the set it starts from, then every change);
// `observe(_:)` only hears of changes (a log, a refresh of something read anew each time).

extension PrivacyManager {
    /// Calls `handler` after every real change of the effective set, until the returned token is cancelled or
    /// released: for code that only needs to hear of changes.
    ///
    /// The handler runs on the thread that made the change (or that was already delivering), outside the
    /// manager's lock, so it may read or change features. Changes arrive in order, once each, and only changes
    /// made after registration: one still being delivered to older observers when `observe` is called is not
    /// delivered to this one. The current set is not delivered at registration: code that acts on edges (starts,
    /// stops, opts out) needs the set it starts from, so it uses ``readAndObserve(_:)`` (or ``updates``).
    /// Once ``ObservationToken/cancel()`` returns, the handler is never called again (a call running on another
    /// thread is waited for).
    public func observe(_ handler: @escaping @Sendable (FeatureChange) -> Void) -> ObservationToken {
        readAndObserve(handler).token
    }

    /// Reads the effective set and registers `handler` in one step: every change the handler receives was made
    /// after `current`, and every change made after it reaches the handler.
    ///
    /// This is how synchronous code follows the set: start what `current` enables, then act on each change's
    /// edges (start, stop, opt out). Reading ``enabledFeatures`` just before or after ``observe(_:)`` instead leaves
    /// a window in which a change shows in the set read and is also delivered (late) to the handler, or in
    /// neither. The handler behaves as with ``observe(_:)``. From async code, ``updates`` does the same.
    public func readAndObserve(
        _ handler: @escaping @Sendable (FeatureChange) -> Void
    ) -> (current: Feature, token: ObservationToken) {
        let observed = ObservedHandler(handler)
        let (id, current) = state.withLock { state in
            state.nextID += 1
            state.observers.append(
                ObserverEntry(id: state.nextID, startSequence: state.sequence, handler: { observed.call($0) }))
            return (state.nextID, state.effective)
        }
        let token = ObservationToken(stopping: observed) { [weak self] in
            // Returned, so the entry is released after the lock: it may hold the last reference to something
            // whose deinit uses this manager, or to the manager itself.
            _ = self?.state.withLock { state in
                state.observers.firstIndex { $0.id == id }.map { state.observers.remove(at: $0) }
            }
        }
        return (current, token)
    }

    /// Renamed ``readAndObserve(_:)``: `observe` hears of changes only, `readAndObserve` also reads the set it
    /// starts from.
    @available(*, deprecated, renamed: "readAndObserve(_:)")
    public func observeFromNow(
        _ handler: @escaping @Sendable (FeatureChange) -> Void
    ) -> (current: Feature, token: ObservationToken) {
        readAndObserve(handler)
    }

    /// The effective set now and after every real change, as an asynchronous sequence: how async code follows
    /// the set (``readAndObserve(_:)`` is the synchronous twin).
    ///
    /// Each `for await` loop is an independent subscription: it first receives the current effective set, then
    /// one element per real change, in order. No-ops (enabling what is on, a remote change that leaves the
    /// effective set as it was) produce nothing. Elements are buffered until the loop takes them. The sequence
    /// ends when the manager is deallocated; the subscription ends when the loop does.
    public var updates: PrivacyManager.Updates { PrivacyManager.Updates(manager: self) }

    func subscribe(_ continuation: AsyncStream<Feature>.Continuation) {
        let id = state.withLock { state in
            state.nextID += 1
            state.subscribers[state.nextID] = Subscriber(startSequence: state.sequence, continuation: continuation)
            continuation.yield(state.effective)
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
    }

    /// Delivers queued changes outside the lock, one at a time and in order.
    ///
    /// Only one thread delivers at a time. A writer that finds delivery in progress leaves its change in the
    /// queue for the delivering thread, so an observer that changes features re-entrantly cannot deadlock, and
    /// no observer ever sees changes out of order.
    func deliverPending() {
        while true {
            let next = state.withLock { state -> (UInt64, FeatureChange, [ObserverEntry], [Subscriber])? in
                guard !state.pending.isEmpty else {
                    state.isDelivering = false
                    return nil
                }
                let (sequence, change) = state.pending.removeFirst()
                let subscribers = state.subscribers.values.filter { $0.startSequence < sequence }
                // The observer list itself, copy-on-write: taking it allocates nothing.
                return (sequence, change, state.observers, subscribers)
            }
            guard let (sequence, change, observers, subscribers) = next else { return }
            // A callback or subscriber sees only changes made after it registered, even while an earlier change is
            // still being delivered.
            for subscriber in subscribers { subscriber.continuation.yield(change.current) }
            for observer in observers where observer.startSequence < sequence { observer.handler(change) }
        }
    }

    typealias Observer = @Sendable (FeatureChange) -> Void

    /// A registered callback, and the sequence number of the last change made before it registered.
    struct ObserverEntry {
        var id: UInt64
        var startSequence: UInt64
        var handler: Observer
    }

    struct Subscriber {
        var startSequence: UInt64
        var continuation: AsyncStream<Feature>.Continuation
    }
}

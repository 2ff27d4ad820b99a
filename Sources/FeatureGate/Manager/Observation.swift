import Foundation

/// Keeps an observation registered (``PrivacyManager/observe(_:)``, ``ConsentManager/observe(_:)``); cancel or
/// release it to stop the callbacks.
///
/// Once ``cancel()`` returns, the handler is never called again. A call already running on another thread when
/// `cancel()` is made is waited for; a handler may cancel its own token (the call it is in finishes normally). So
/// do not cancel (or release the last reference to) a token while holding a lock its handler takes.
public final class ObservationToken: Sendable {
    private let onCancel: LockedValue<(@Sendable () -> Void)?>
    /// Stops the handler and waits for its calls on other threads; kept, so that every `cancel()` waits.
    private let stop: (@Sendable () -> Void)?

    /// A token whose cancel runs `onCancel` once; it waits for nothing, so `onCancel` must itself make sure that
    /// nothing is delivered after it returns.
    package init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = LockedValue(onCancel)
        self.stop = nil
    }

    /// A token that stops `handler` for good at cancel, then runs `onCancel` (once) to unregister it.
    package init<Value>(stopping handler: ObservedHandler<Value>, onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = LockedValue(onCancel)
        self.stop = { handler.stop() }
    }

    /// Stops the callbacks: when it returns, the handler is not running on another thread and will not be called
    /// again. Calling it again does nothing more.
    public func cancel() {
        stop?()
        onCancel.withLock { action in
            let pending = action
            action = nil
            return pending
        }?()
    }

    deinit { cancel() }
}

/// One registered observation handler that ``stop()`` ends for good: no call starts after `stop()` began, and
/// `stop()` returns only once the calls running on other threads returned.
///
/// Managers keep it in their observer lists and call ``call(_:)`` outside their own locks; the
/// ``ObservationToken`` calls ``stop()``. A call on the stopping thread itself (a handler that cancels its own
/// token) is not waited for, so it cannot deadlock.
package final class ObservedHandler<Value>: @unchecked Sendable {
    private let condition = NSCondition()
    /// `nil` once stopped. Guarded by `condition`.
    private var handler: (@Sendable (Value) -> Void)?
    /// The threads inside the handler now, once per call. Guarded by `condition`.
    private var callers: [pthread_t] = []

    package init(_ handler: @escaping @Sendable (Value) -> Void) {
        self.handler = handler
    }

    /// Calls the handler with `value`, unless stopped.
    package func call(_ value: Value) {
        condition.lock()
        guard let handler else {
            condition.unlock()
            return
        }
        callers.append(pthread_self())
        condition.unlock()
        handler(value)
        condition.lock()
        let me = pthread_self()
        if let index = callers.firstIndex(where: { pthread_equal($0, me) != 0 }) { callers.remove(at: index) }
        condition.broadcast()
        condition.unlock()
    }

    /// Stops the handler: no call starts after this begins, and it returns once every call running on another
    /// thread returned. The handler is released after the lock (it may hold the last reference to something whose
    /// deinit needs it).
    package func stop() {
        condition.lock()
        let released = handler
        handler = nil
        let me = pthread_self()
        while callers.contains(where: { pthread_equal($0, me) == 0 }) { condition.wait() }
        condition.unlock()
        withExtendedLifetime(released) {}
    }
}

extension PrivacyManager {
    /// The asynchronous sequence of effective feature sets returned by ``PrivacyManager/updates``.
    ///
    /// Each iterator is its own subscription: it starts with the current set, then receives every real change.
    public struct Updates: AsyncSequence, Sendable {
        /// Each element is the whole effective set.
        public typealias Element = Feature

        let manager: PrivacyManager

        /// Subscribes and returns an iterator that starts with the current effective set.
        public func makeAsyncIterator() -> Iterator {
            let (stream, continuation) = AsyncStream.makeStream(of: Feature.self, bufferingPolicy: .unbounded)
            manager.subscribe(continuation)
            return Iterator(base: stream.makeAsyncIterator())
        }

        /// Iterates one subscription.
        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<Feature>.Iterator

            /// The next effective set, or `nil` once the manager is gone.
            public mutating func next() async -> Feature? {
                await base.next()
            }
        }
    }
}

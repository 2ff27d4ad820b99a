/// Keeps a ``PrivacyManager/observe(_:)`` callback registered; cancel or release it to stop the callbacks.
public final class ObservationToken: Sendable {
    private let onCancel: LockedValue<(@Sendable () -> Void)?>

    package init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = LockedValue(onCancel)
    }

    /// Stops the callbacks. Calling it again does nothing.
    public func cancel() {
        onCancel.withLock { action in
            let pending = action
            action = nil
            return pending
        }?()
    }

    deinit { cancel() }
}

/// The asynchronous sequence of effective feature sets returned by ``PrivacyManager/updates``.
///
/// Each iterator is its own subscription: it starts with the current set, then receives every real change.
public struct FeatureUpdates: AsyncSequence, Sendable {
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

extension ConsentManager {
    /// Every applied status change, as an asynchronous sequence: how async code follows consent
    /// (``observe(_:)`` is the callback twin).
    ///
    /// Each `for await` loop is an independent subscription, registered when the loop starts: it receives the
    /// changes applied after that, in order, once each, as ``observe(_:)`` does; read ``allStatuses`` for where it
    /// starts. Changes are buffered until the loop takes them. The subscription ends when the loop does.
    ///
    /// ```swift
    /// for await change in consent.updates where change.category == .analytics {
    ///     print("analytics consent: \(change.previous) -> \(change.current)")
    /// }
    /// ```
    public nonisolated var updates: ConsentManager.Updates { ConsentManager.Updates(manager: self) }
}

extension ConsentManager {
    /// The asynchronous sequence of applied consent changes returned by ``ConsentManager/updates``.
    public struct Updates: AsyncSequence, Sendable {
        /// Each element is one applied change.
        public typealias Element = ConsentChange

        let manager: ConsentManager

        /// Subscribes and returns an iterator of the changes applied from now on.
        public func makeAsyncIterator() -> Iterator {
            let (stream, continuation) = AsyncStream.makeStream(of: ConsentChange.self, bufferingPolicy: .unbounded)
            let token = manager.observe { continuation.yield($0) }
            continuation.onTermination = { _ in token.cancel() }
            return Iterator(base: stream.makeAsyncIterator(), token: token)
        }

        /// Iterates one subscription.
        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<ConsentChange>.Iterator
            /// Keeps the subscription while the iterator lives.
            let token: ObservationToken

            /// The next applied change.
            public mutating func next() async -> ConsentChange? {
                await base.next()
            }
        }
    }
}

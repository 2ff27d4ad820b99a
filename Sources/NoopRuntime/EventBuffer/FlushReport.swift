/// What one ``GatedEventBuffer/flush()`` did.
public struct FlushReport: Sendable, Hashable {
    /// How the flush went overall.
    public enum Outcome: Sendable, Hashable {
        /// The gate was open: each backend with events to deliver was tried (see ``backends``).
        case flushed
        /// The gate was closed: nothing was delivered, and everything queued was purged instead.
        case purged
        /// Another flush was under way; this one did nothing.
        case alreadyFlushing
    }

    /// How the flush went overall.
    public var outcome: Outcome
    /// One entry per backend that had events to deliver, in the order the backends were given.
    public var backends: [BackendDelivery]
    /// Queued events dropped by a purge during this flush (see ``GatedEventBuffer/purge()`` for how they count).
    public var purgedEvents: Int

    /// Creates a report.
    public init(outcome: Outcome, backends: [BackendDelivery] = [], purgedEvents: Int = 0) {
        self.outcome = outcome
        self.backends = backends
        self.purgedEvents = purgedEvents
    }
}

/// What one backend got in one flush.
public struct BackendDelivery: Sendable, Hashable {
    /// How the delivery ended.
    public enum Result: Sendable, Hashable {
        /// The backend took the batch.
        case delivered
        /// Every attempt failed; the batch waits for the next flush. The payload describes the last error.
        case failed(String)
        /// The gate closed, or a purge ran, between attempts; the batch was purged and no further attempt made,
        /// even if the gate opened again.
        case abandonedGateClosed
        /// The flush's task was cancelled (a subsystem stopping cancels its flush), or its deadline
        /// (``GatedEventBuffer/flushDeadline``) passed: no further attempt was made,
        /// and a call under way was no longer waited for. The batch goes back to the backlog unless revoked.
        case cancelled
    }

    /// The backend's ``EventBackend/name``.
    public var backend: String
    /// How many entries the batch held: events, and the consent changes a buffer that follows consent queues.
    public var events: Int
    /// How many attempts were made.
    public var attempts: Int
    /// The waits between attempts, as the policy computed them.
    public var delays: [Duration]
    /// How the delivery ended.
    public var result: Result
}

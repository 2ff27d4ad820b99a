extension SubsystemRuntime {
    /// Where `subsystem` stands, or `nil` when it is not registered.
    public func phase(of subsystem: any Subsystem) -> SubsystemPhase? {
        state.withLock { state in state.entries.first { $0.subsystem === subsystem }?.phase }
    }

    /// The sequence number of the last journal event, `0` before the first. Take it before a change and pass it
    /// to ``events(after:)`` or ``purges(after:)`` after ``settle()`` to see what the change did.
    public var lastEventSequence: UInt64 { state.withLock { $0.lastSequence } }

    /// The journal events after `sequence`, oldest first (at most ``journalCapacity`` are kept).
    public func events(after sequence: UInt64 = 0) -> [LifecycleEvent] {
        state.withLock { state in state.journal.filter { $0.sequence > sequence } }
    }

    /// The purge reports recorded after `sequence`, oldest first.
    public func purges(after sequence: UInt64 = 0) -> [SubsystemPurge] {
        events(after: sequence).compactMap { event in
            guard case .purged(let report) = event.kind else { return nil }
            return SubsystemPurge(subsystem: event.subsystem, report: report)
        }
    }
}

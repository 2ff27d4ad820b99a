import FeatureGate

/// One thing the runtime did to a subsystem, as recorded in its journal.
public struct LifecycleEvent: Sendable, Hashable, CustomStringConvertible {
    /// What was done.
    public enum Kind: Sendable, Hashable {
        /// ``Subsystem/start()`` returned.
        case started
        /// ``Subsystem/start()`` threw; the payload describes the error.
        case startFailed(String)
        /// ``Subsystem/stop(reason:)`` returned. The payload is the features that were disabled (empty for a
        /// shutdown).
        case stopped(disabled: Feature)
        /// ``Subsystem/purge()`` returned this report.
        case purged(PurgeReport)
    }

    /// Position in the journal, from 1, increasing by one per event.
    public let sequence: UInt64
    /// The subsystem's ``Subsystem/name``.
    public let subsystem: String
    /// What was done.
    public let kind: Kind

    /// `#3 analytics: purged 1 file, 5 items, 0 identifiers`.
    public var description: String {
        let what =
            switch kind {
            case .started: "started"
            case .startFailed(let error): "start failed: \(error)"
            case .stopped(let disabled): disabled.isEmpty ? "stopped (shutdown)" : "stopped (\(disabled) disabled)"
            case .purged(let report): "purged \(report)"
            }
        return "#\(sequence) \(subsystem): \(what)"
    }
}

/// A subsystem's purge report, as ``SubsystemRuntime/purges(after:)`` returns it.
public struct SubsystemPurge: Sendable, Hashable {
    /// The subsystem's ``Subsystem/name``.
    public let subsystem: String
    /// What it deleted.
    public let report: PurgeReport

    /// Creates an entry, e.g. for a ``RevocationReport`` built in a test.
    public init(subsystem: String, report: PurgeReport) {
        self.subsystem = subsystem
        self.report = report
    }
}

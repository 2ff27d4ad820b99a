/// Where a registered subsystem stands.
public enum SubsystemPhase: Sendable, Hashable {
    /// Not running: never started, or stopped.
    case stopped
    /// Started and not stopped since.
    case running
    /// ``Subsystem/start()`` threw; it will be purged on the next edge and may start after it.
    case startFailed
}

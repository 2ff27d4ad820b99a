import FeatureGate

/// A part of an SDK that runs only while the features it needs are enabled, and forgets its data when they
/// are not.
///
/// Register subsystems with a ``SubsystemRuntime``; it calls them, one call at a time and never concurrently:
/// - ``start()`` when every feature in ``requiredFeatures`` has become enabled;
/// - ``stop(reason:)`` then ``purge()`` when one of them is disabled again (the enabled → disabled edge);
/// - ``stop(reason:)`` with ``StopReason/shutdown`` when the runtime shuts down, without a purge.
///
/// A subsystem needs *all* of its features: one that needs `[.push, .analytics]` runs only while both are on.
/// A subsystem whose feature was never enabled is never called at all, so with every feature off it does
/// nothing: make sure its initializer does no I/O either.
public protocol Subsystem: AnyObject, Sendable {
    /// A short name for reports and the runtime's journal. The default is the type name.
    var name: String { get }

    /// The features that must all be enabled for the subsystem to run. Read once, at registration; never empty.
    var requiredFeatures: Feature { get }

    /// Starts work: registers, schedules, loads caches.
    ///
    /// Throwing leaves the subsystem stopped; the runtime records the error in its journal, does not call
    /// ``stop(reason:)``, still calls ``purge()`` on the next enabled → disabled edge, and tries ``start()``
    /// again only after that edge.
    func start() async throws

    /// Stops work: cancels timers and uploads, drops callbacks.
    ///
    /// On an enabled → disabled edge the reason carries a ``OneShotPermit`` that lets the subsystem send one
    /// opt-out request, through ``GatedTransport/sendExitRequest(_:permit:)``, before ``purge()`` deletes its
    /// data.
    func stop(reason: StopReason) async

    /// Deletes everything the subsystem keeps locally, files, queues and identifiers, and says what it deleted.
    ///
    /// Called after ``stop(reason:)`` on every enabled → disabled edge, and also when the features were enabled
    /// only so briefly that the runtime never started the subsystem (something may have been queued meanwhile).
    /// Must be idempotent and must touch nothing when there is nothing to delete.
    func purge() async -> PurgeReport
}

extension Subsystem {
    /// The type name.
    public var name: String { String(describing: type(of: self)) }
}

/// Why the runtime stops a subsystem.
public enum StopReason: Sendable, CustomStringConvertible {
    /// A feature the subsystem needs was disabled (the payload: those of its features that are now off). The
    /// permit allows one opt-out request; ``SubsystemRuntime`` arms it when it starts the subsystem and withdraws
    /// it after this stop, so it can be spent only here, and only once.
    case featuresDisabled(Feature, optOut: OneShotPermit)
    /// The runtime is shutting down. No opt-out, no purge: the features are still enabled.
    case shutdown

    /// `features disabled: [push]` or `shutdown`.
    public var description: String {
        switch self {
        case .featuresDisabled(let features, _): "features disabled: \(features)"
        case .shutdown: "shutdown"
        }
    }
}

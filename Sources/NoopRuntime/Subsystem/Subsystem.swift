import FeatureGate

/// A part of an SDK that runs only while the features it needs are enabled, and forgets its data when they
/// are not.
///
/// Register subsystems with a ``SubsystemRuntime``; it calls them, one call at a time and never concurrently:
/// - ``start()`` when its ``requiredFeatures`` have become enabled;
/// - ``stop(reason:)`` then ``purge()`` when they no longer are (the enabled → disabled edge);
/// - ``stop(reason:)`` with ``StopReason/shutdown`` when the runtime shuts down, without a purge.
///
/// A subsystem needs *all* of its features: one that needs `[.push, .analytics]` runs only while both are on.
/// A subsystem that should run while *any* of them is on (an anonymous identifier kept while anything at all is
/// enabled, say) returns ``FeatureRequirement/any`` from ``featureRequirement``.
///
/// A subsystem whose features were never enabled is never called at all, so with every feature off it does
/// nothing: make sure its initializer does no I/O either.
public protocol Subsystem: AnyObject, Sendable {
    /// A short name for reports and the runtime's journal. The default is the type name.
    var name: String { get }

    /// The features the subsystem needs. Read once, at registration; never empty.
    var requiredFeatures: Feature { get }

    /// Whether all of ``requiredFeatures`` must be enabled (the default) or any one of them. Read once, at
    /// registration.
    var featureRequirement: FeatureRequirement { get }

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

    /// ``FeatureRequirement/all``.
    public var featureRequirement: FeatureRequirement { .all }
}

/// How a subsystem's ``Subsystem/requiredFeatures`` decide whether it runs.
public enum FeatureRequirement: Sendable, Hashable {
    /// Runs while every one of the features is enabled; stops when any is disabled.
    case all
    /// Runs while at least one of the features is enabled; stops when the last is disabled.
    case any

    /// Whether `enabled` satisfies the requirement for `features`.
    @inlinable
    public func isMet(by enabled: Feature, for features: Feature) -> Bool {
        switch self {
        case .all: enabled.isSuperset(of: features)
        case .any: !enabled.isDisjoint(with: features)
        }
    }
}

/// Why the runtime stops a subsystem.
public enum StopReason: Sendable, CustomStringConvertible {
    /// Features the subsystem needs were disabled (the payload: those of its features that are now off). The
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

import FeatureGate
import Foundation

/// Starts, stops and purges an SDK's subsystems as the gate's features change.
///
/// ```swift
/// let runtime = SubsystemRuntime(privacy: privacy)
/// runtime.register(pushSubsystem)        // needs [.push]
/// runtime.register(analyticsSubsystem)   // needs [.analytics]
/// runtime.start()                        // follows the gate from now on
/// privacy.enableFeatures(.analytics)
/// await runtime.settle()                 // analytics has started
/// ```
///
/// ## What it does
/// On each pass the runtime reads the gate's effective set and brings every subsystem in line with it:
/// - a subsystem whose ``Subsystem/requiredFeatures`` are enabled (all of them, or any for
///   ``FeatureRequirement/any``) and that is not running is started;
/// - a running subsystem whose features no longer are is stopped (``StopReason/featuresDisabled(_:optOut:)``,
///   carrying its one-shot opt-out permit) and then purged;
/// - a subsystem whose features were enabled only so briefly that it was never started is purged anyway, in
///   case something was queued while they were on.
///
/// Stops and purges run first, in reverse registration order, then starts, in registration order.
///
/// ## Ordering guarantees
/// Passes run one at a time, on one task: no two calls into subsystems overlap, and each subsystem's calls
/// happen in order. The one exception is a call ``cancelCallInFlight()`` gave up on (revoke-all past its
/// deadline): it is cancelled, but if it ignores cancellation it keeps running while the pass moves on.
///
/// A pass follows the gate's *latest* state, so every action follows a real edge between the subsystem's current
/// state and the gate's, and none runs twice for the same edge: a subsystem is started only when stopped and
/// stopped only when running. Changes the runtime has not reached yet are coalesced, without
/// losing a disable: features enabled and disabled again in between never start the subsystem (it is still
/// purged), and features disabled and enabled again in between still stop and purge it before it restarts.
///
/// ## Silence
/// Before ``start()``, and after it while every feature is off, the runtime calls no subsystem at all, so a
/// fully disabled SDK does no I/O. The one exception is the purge that
/// ``settlePurgingStoppedSubsystems()`` (and so revoke-all) asks for: it deletes what an earlier run may have
/// left, once per subsystem.
///
/// Thread safety: every method may be called from any thread.
public final class SubsystemRuntime: Sendable {
    /// The gate this runtime follows.
    public let privacy: PrivacyManager

    /// The runtime's own one-shot permit, for one SDK-wide exit request (such as an erasure request).
    ///
    /// The runtime arms it whenever it starts a subsystem, so it is armed once anything has run; whoever sends
    /// the request spends it with ``GatedTransport/sendExitRequest(_:permit:)``. It stays spent until a
    /// subsystem starts again. Nothing in the runtime spends it.
    public let exitPermit = OneShotPermit()

    /// How many journal events the runtime keeps; older ones are dropped.
    public static let journalCapacity = 4_096

    let state = LockedValue(State())

    /// Creates a runtime for `privacy`. It calls nothing until ``start()``, except a purge that
    /// ``settlePurgingStoppedSubsystems()`` asks for.
    public init(privacy: PrivacyManager) {
        self.privacy = privacy
    }

    // MARK: - Registration and lifetime

    /// Adds `subsystem`, which the runtime will start and stop from now on.
    ///
    /// Registering after ``start()`` schedules a pass, so the subsystem starts if its features are enabled.
    ///
    /// - Precondition: `subsystem` needs at least one feature and is not registered yet.
    public func register(_ subsystem: any Subsystem) {
        let needs = subsystem.requiredFeatures
        precondition(!needs.isEmpty, "subsystem \(subsystem.name) needs no feature: it could never be stopped")
        let spawn = state.withLock { state in
            precondition(
                !state.entries.contains { $0.subsystem === subsystem },
                "subsystem \(subsystem.name) is registered twice"
            )
            state.entries.append(Entry(subsystem: subsystem, needs: needs, requirement: subsystem.featureRequirement))
            return state.mode == .following ? state.requestPass() : false
        }
        if spawn { spawnWorker() }
    }

    /// Begins following the gate: schedules a pass for the current features, then one per change.
    ///
    /// Returns at once; ``settle()`` waits for the first pass. Calling it again, or after ``shutdown()``, does
    /// nothing.
    ///
    /// When the gate's store records a revoke-all that a kill interrupted before every subsystem was purged
    /// (`PrivacyManager.pendingRevocation`), the first pass purges every registered subsystem (as
    /// ``settlePurgingStoppedSubsystems()`` does) before it starts any, and marks that part of the revocation done
    /// when no purge failed. Likewise, when the store records purges a "no" owes (a kill came between a disable or
    /// a consent refusal and its purge), the first pass purges each stopped subsystem that needs one of those flags,
    /// and marks the flag's purge done once its subsystems purged without failure. With nothing owed, a start calls
    /// no subsystem whose features are off. Register every subsystem before calling this.
    public func start() {
        let token = privacy.observe { [weak self] change in self?.noteChange(change, from: nil) }
        let pending = privacy.pendingRevocation.flatMap { $0.areSubsystemsPurged ? nil : $0 }
        let owed = privacy.owedPurges
        let spawn = state.withLock { state in
            guard state.mode == .idle else { return false }
            state.mode = .following
            state.token = token
            state.owedAtStart = owed
            if let pending {
                state.purgeStoppedRequested = true
                state.purgeBeforeStarting = pending.requestKey
            }
            return state.requestPass()
        }
        if spawn { spawnWorker() }
    }

    /// Waits until every pass scheduled before this call (and one more, for the gate's current state) has
    /// finished.
    ///
    /// When it returns, every subsystem matches the gate as it was at some moment after the call began. Before
    /// ``start()`` it returns without calling anything.
    public func settle() async {
        let (ticket, spawn) = state.withLock { state in
            let spawn = state.requestPass()
            return (state.requested, spawn)
        }
        if spawn { spawnWorker() }
        await waitFor(ticket)
    }

    /// Like ``settle()``, and the pass it waits for also purges every subsystem that is not running and has not
    /// been purged cleanly since it last ran (or since the runtime was created).
    ///
    /// An ordinary pass purges only on an edge it saw, and ``start()`` only what the store records as owed (a kill
    /// between a "no" and its purge). A subsystem whose features were already off at launch may still hold files an
    /// earlier run left (by a version that recorded no owed purges, or restored from a backup); so
    /// may a purge that reported failures. Revoke-all (``ConsentRevocation``) calls this so that, afterwards,
    /// every subsystem has been purged. A subsystem purged without failures and not started since is skipped,
    /// so calling this twice purges nothing the second time. Running subsystems are left alone.
    ///
    /// Purges must touch nothing when there is nothing to delete (see ``Subsystem/purge()``), so with every
    /// feature off this writes nothing. It purges before ``start()`` and after ``shutdown()`` too: subsystems
    /// that never ran in this process may hold files from an earlier one.
    public func settlePurgingStoppedSubsystems() async {
        let (ticket, spawn) = state.withLock { state in
            state.purgeStoppedRequested = true
            let spawn = state.requestPass()
            return (state.requested, spawn)
        }
        if spawn { spawnWorker() }
        await waitFor(ticket)
    }

    /// Stops following the gate and stops every running subsystem with ``StopReason/shutdown``, without purging.
    ///
    /// Waits until that is done. The runtime calls nothing afterwards; it cannot be started again.
    public func shutdown() async {
        let (token, ticket, spawn) = state.withLock { state in
            state.mode = .shutDown
            let token = state.token
            state.token = nil
            let spawn = state.requestPass()
            return (token, state.requested, spawn)
        }
        token?.cancel()
        if spawn { spawnWorker() }
        await waitFor(ticket)
    }
}

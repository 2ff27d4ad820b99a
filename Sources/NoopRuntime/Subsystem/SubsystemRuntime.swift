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

    private let state = LockedValue(State())

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
    /// when no purge failed. Register every subsystem before calling this.
    public func start() {
        let token = privacy.observe { [weak self] change in self?.noteChange(change, from: nil) }
        let pending = privacy.pendingRevocation.flatMap { $0.areSubsystemsPurged ? nil : $0 }
        let spawn = state.withLock { state in
            guard state.mode == .idle else { return false }
            state.mode = .following
            state.token = token
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
    /// An ordinary pass purges only on an edge it saw. A subsystem whose features were already off at launch is
    /// never purged, yet an earlier run may have left its files behind (a crash between disable and purge); so
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

    // MARK: - Inspection

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

    // MARK: - Passes

    /// Records a change for the next pass. `epoch` is `nil` for the runtime's long-lived observer, or the pass
    /// whose observer delivered it: a subsystem started by pass *e* takes edges only from pass *e*'s observer,
    /// which was registered before that pass read the gate, so a change made before it started (and delivered
    /// late by another thread) is never an edge for it.
    private func noteChange(_ change: FeatureChange, from epoch: UInt64?) {
        let spawn = state.withLock { state in
            guard state.mode == .following else { return false }
            for index in state.entries.indices where state.entries[index].edgeEpoch == epoch {
                if state.entries[index].isMet(by: change.current) {
                    state.entries[index].metSinceLastPass = true
                } else {
                    state.entries[index].disabledSinceLastPass.formUnion(
                        state.entries[index].needs.subtracting(change.current)
                    )
                }
            }
            return state.requestPass()
        }
        if spawn { spawnWorker() }
    }

    private func spawnWorker() {
        Task { await self.drain() }
    }

    private func waitFor(_ ticket: UInt64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.completed >= ticket { return true }
                state.waiters.append((ticket, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// The single worker: runs passes until none is pending. Only one runs at a time (see `workerActive`).
    private func drain() async {
        while true {
            let ticket: UInt64? = state.withLock { state in
                guard state.completed < state.requested else {
                    state.workerActive = false
                    return nil
                }
                return state.requested
            }
            guard let ticket else { return }
            await pass()
            let ready = state.withLock { state in
                state.completed = ticket
                let ready = state.waiters.filter { $0.ticket <= ticket }.map(\.continuation)
                state.waiters.removeAll { $0.ticket <= ticket }
                return ready
            }
            for continuation in ready { continuation.resume() }
        }
    }

    private func pass() async {
        // Observe and read the gate in one step: this observer gets exactly the changes after the read (see
        // noteChange), so a subsystem started on `target` never goes through an edge from before it.
        let epoch = state.withLock { state in
            state.epoch += 1
            return state.epoch
        }
        let (target, passToken) = privacy.readAndObserve { [weak self] change in self?.noteChange(change, from: epoch) }
        var keepsToken = false
        var replacedTokens: [ObservationToken] = []
        var revocation: UUID?
        let mark = lastEventSequence
        let plan: [(index: Int, action: Action)] = state.withLock { state in
            let purgeStopped = state.purgeStoppedRequested
            state.purgeStoppedRequested = false
            revocation = state.purgeBeforeStarting
            let purgeFirst = revocation != nil
            state.purgeBeforeStarting = nil
            var stops: [(Int, Action)] = []
            var starts: [(Int, Action)] = []
            for index in state.entries.indices {
                let entry = state.entries[index]
                let wasMet = entry.metSinceLastPass
                let wasDisabled = entry.disabledSinceLastPass
                state.entries[index].metSinceLastPass = false
                state.entries[index].disabledSinceLastPass = []
                let isMet = state.mode == .following && entry.isMet(by: target)
                switch (state.mode, entry.phase, isMet) {
                case (.idle, _, _) where purgeStopped && !entry.isPurged:
                    // Revoke-all before start: the subsystem never ran here, but an earlier run may have left data.
                    stops.append((index, .purge))
                case (.idle, _, _):
                    continue
                case (.shutDown, .running, _):
                    stops.append((index, .stopForShutdown))
                case (.shutDown, .startFailed, _):
                    state.entries[index].phase = .stopped
                    if purgeStopped { stops.append((index, .purge)) }
                case (.shutDown, .stopped, _) where purgeStopped && !entry.isPurged:
                    stops.append((index, .purge))
                case (.following, .stopped, true):
                    // Purged first when asked to (a revocation a kill interrupted): it may hold an earlier run's data.
                    if purgeFirst && !entry.isPurged { stops.append((index, .purge)) }
                    starts.append((index, .start))
                case (.following, .running, true) where !wasDisabled.isEmpty:
                    // Disabled and enabled again before this pass: the disable was a real edge, so it still
                    // stops and purges (and may opt out), then the subsystem starts afresh.
                    stops.append((index, .stopAndPurge(disabled: wasDisabled)))
                    starts.append((index, .start))
                case (.following, .startFailed, true) where !wasDisabled.isEmpty:
                    stops.append((index, .purge))
                    starts.append((index, .start))
                case (.following, .running, false):
                    stops.append((index, .stopAndPurge(disabled: entry.needs.subtracting(target))))
                case (.following, .startFailed, false):
                    stops.append((index, .purge))
                case (.following, .stopped, false) where wasMet || (purgeStopped && !entry.isPurged):
                    stops.append((index, .purge))
                default:
                    continue
                }
            }
            for (index, _) in starts {
                let replaced = state.entries[index].edgeEpoch
                state.entries[index].edgeEpoch = epoch
                if let replaced, let token = state.releasePassToken(replaced) { replacedTokens.append(token) }
                keepsToken = true
            }
            if keepsToken { state.passTokens[epoch] = passToken }
            return stops.reversed() + starts
        }
        if !keepsToken { passToken.cancel() }
        for token in replacedTokens { token.cancel() }
        for (index, action) in plan {
            let (subsystem, permit) = state.withLock { ($0.entries[index].subsystem, $0.entries[index].permit) }
            switch action {
            case .start:
                let outcome = await call(index, "start") { try await subsystem.start() }
                switch outcome {
                case .success:
                    permit.arm()
                    exitPermit.arm()
                    update(index, phase: .running, event: .started)
                case .failure(let error):
                    update(index, phase: .startFailed, event: .startFailed(String(describing: error)))
                case nil:
                    update(index, phase: .startFailed, event: .startFailed("cancelled by a revocation"))
                }
            case .stopAndPurge(let disabled):
                _ = await call(index, "stop") {
                    await subsystem.stop(reason: .featuresDisabled(disabled, optOut: permit))
                }
                permit.disarm()
                update(index, phase: .stopped, event: .stopped(disabled: disabled))
                await purge(index, subsystem)
            case .purge:
                await purge(index, subsystem)
            case .stopForShutdown:
                _ = await call(index, "stop") { await subsystem.stop(reason: .shutdown) }
                permit.disarm()
                update(index, phase: .stopped, event: .stopped(disabled: []))
            }
        }
        if let revocation, purges(after: mark).allSatisfy(\.report.failures.isEmpty) {
            // The purge a killed revoke-all owed is done; a failure leaves it owed for the next start.
            try? privacy.updatePendingRevocation(key: revocation) { $0.areSubsystemsPurged = true }
        }
    }

    private func purge(_ index: Int, _ subsystem: any Subsystem) async {
        let outcome = await call(index, "purge") { await subsystem.purge() }
        let report: PurgeReport
        switch outcome {
        case .success(let purged): report = purged
        case .failure(let error): report = PurgeReport(failures: ["purge failed: \(error)"])
        case nil: report = PurgeReport(failures: ["purge cancelled by a revocation before it finished"])
        }
        update(index, phase: .stopped, event: .purged(report))
    }

    /// Runs one call into a subsystem so that ``cancelCallInFlight()`` can cancel it and stop waiting for it;
    /// `nil` when it was cancelled that way.
    private func call<Value: Sendable>(
        _ index: Int,
        _ name: String,
        _ body: @escaping @Sendable () async throws -> Value
    ) async -> Result<Value, any Error>? {
        let subsystem = state.withLock { $0.entries[index].subsystem.name }
        let race = Race<Result<Value, any Error>?>()
        let handle = CallInFlight(subsystem: subsystem, call: name, cancel: { race.finish(nil) })
        state.withLock { $0.callInFlight = handle }
        defer { state.withLock { $0.callInFlight = nil } }
        return await race.wait { finish in
            Task {
                do { finish(.success(try await body())) } catch { finish(.failure(error)) }
            }
        }
    }

    /// Cancels the subsystem call under way, if any, and stops waiting for it: the pass moves on (a stop that is
    /// cancelled is still followed by the purge). Returns what was cancelled.
    ///
    /// Revoke-all calls it when its deadline passes; a subsystem that ignores cancellation is left to finish on
    /// its own, and the runtime no longer waits for it.
    public func cancelCallInFlight() -> CancelledOperation? {
        // Reported only if the cancellation won: a call that finished meanwhile was not cancelled.
        guard let handle = state.withLock({ $0.callInFlight }), handle.cancel() else { return nil }
        return CancelledOperation(subsystem: handle.subsystem, operation: handle.call)
    }

    private func update(_ index: Int, phase: SubsystemPhase, event: LifecycleEvent.Kind) {
        let released: ObservationToken? = state.withLock { state in
            state.entries[index].phase = phase
            var released: ObservationToken?
            // A subsystem this pass restarts keeps the pass's observer through its stop: the start follows.
            if phase != .running, let epoch = state.entries[index].edgeEpoch, epoch != state.epoch {
                state.entries[index].edgeEpoch = nil
                released = state.releasePassToken(epoch)
            }
            switch event {
            case .started, .startFailed: state.entries[index].isPurged = false
            case .purged(let report): state.entries[index].isPurged = report.failures.isEmpty
            case .stopped: break
            }
            state.lastSequence += 1
            state.journal.append(
                LifecycleEvent(
                    sequence: state.lastSequence, subsystem: state.entries[index].subsystem.name, kind: event)
            )
            if state.journal.count > 2 * Self.journalCapacity {
                state.journal.removeFirst(state.journal.count - Self.journalCapacity)
            }
            return released
        }
        released?.cancel()
    }

    // MARK: - State

    private enum Mode { case idle, following, shutDown }

    private enum Action {
        case start
        case stopAndPurge(disabled: Feature)
        case purge
        case stopForShutdown
    }

    private struct Entry {
        let subsystem: any Subsystem
        let needs: Feature
        let requirement: FeatureRequirement
        let permit = OneShotPermit()
        var phase = SubsystemPhase.stopped
        /// Whether some change since the last pass met the requirement: if it is unmet again by the time of the
        /// pass, the subsystem is purged even though it never started.
        var metSinceLastPass = false
        /// The needed features that some change since the last pass left disabled (with the requirement unmet):
        /// if the requirement is met again by the time of the pass, the running subsystem still goes through the
        /// disable edge it missed.
        var disabledSinceLastPass: Feature = []
        /// Whether the last thing done to the subsystem was a purge without failures: nothing of it is left to
        /// delete, so ``SubsystemRuntime/settlePurgingStoppedSubsystems()`` skips it. False at registration: an
        /// earlier run may have left data behind.
        var isPurged = false
        /// The pass whose observer reports this subsystem's edges while it runs (set when a pass decides to start
        /// it); `nil` while stopped, when the runtime's long-lived observer does.
        var edgeEpoch: UInt64?

        init(subsystem: any Subsystem, needs: Feature, requirement: FeatureRequirement) {
            self.subsystem = subsystem
            self.needs = needs
            self.requirement = requirement
        }

        func isMet(by features: Feature) -> Bool { requirement.isMet(by: features, for: needs) }
    }

    private struct State {
        var entries: [Entry] = []
        var mode = Mode.idle
        var token: ObservationToken?
        /// Passes requested and passes completed; a waiter with ticket `t` resumes once `completed >= t`.
        var requested: UInt64 = 0
        var completed: UInt64 = 0
        var workerActive = false
        var waiters: [(ticket: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
        var journal: [LifecycleEvent] = []
        var lastSequence: UInt64 = 0
        /// Set by ``SubsystemRuntime/settlePurgingStoppedSubsystems()``; the next pass purges stopped subsystems
        /// that are not known to be clean, and clears it.
        var purgeStoppedRequested = false
        /// Set by ``SubsystemRuntime/start()`` to finish the pending revocation with this key: the next pass also
        /// purges the subsystems it is about to start, and marks the revocation's purge done if none failed.
        var purgeBeforeStarting: UUID?
        /// Passes so far; each registers an observer before it reads the gate.
        var epoch: UInt64 = 0
        /// The observers of passes that started a subsystem still running, by pass.
        var passTokens: [UInt64: ObservationToken] = [:]
        var callInFlight: CallInFlight?

        /// Takes the observer of pass `epoch` out once no subsystem takes its edges from it; the caller cancels
        /// it after the lock.
        mutating func releasePassToken(_ epoch: UInt64) -> ObservationToken? {
            guard !entries.contains(where: { $0.edgeEpoch == epoch }) else { return nil }
            return passTokens.removeValue(forKey: epoch)
        }

        /// Schedules a pass; returns whether the caller must start the worker.
        mutating func requestPass() -> Bool {
            requested += 1
            guard !workerActive else { return false }
            workerActive = true
            return true
        }
    }
}

/// Where a registered subsystem stands.
public enum SubsystemPhase: Sendable, Hashable {
    /// Not running: never started, or stopped.
    case stopped
    /// Started and not stopped since.
    case running
    /// ``Subsystem/start()`` threw; it will be purged on the next edge and may start after it.
    case startFailed
}

/// A call into a subsystem that the runtime is waiting for.
private struct CallInFlight: Sendable {
    let subsystem: String
    let call: String
    /// Stops waiting for the call; `true` if that came before the call finished (and only the first time).
    let cancel: @Sendable () -> Bool
}

/// A call that a revocation cancelled because it did not finish in time.
public struct CancelledOperation: Sendable, Hashable, CustomStringConvertible {
    /// The subsystem's name, or the step of revoke-all (such as `"erasure request"`).
    public var subsystem: String
    /// What was cancelled: `"start"`, `"stop"`, `"purge"`, `"send"`.
    public var operation: String

    /// Creates an entry.
    public init(subsystem: String, operation: String) {
        self.subsystem = subsystem
        self.operation = operation
    }

    /// `analytics: stop`.
    public var description: String { "\(subsystem): \(operation)" }
}

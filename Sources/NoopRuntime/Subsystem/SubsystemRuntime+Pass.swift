import FeatureGate
import Foundation

extension SubsystemRuntime {
    func pass() async {
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
            let owed = state.owedAtStart
            state.owedAtStart = []
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
                case (.following, .stopped, false)
                where wasMet || ((purgeStopped || !entry.needs.isDisjoint(with: owed)) && !entry.isPurged):
                    // Also a purge a "no" owed when a kill came before it.
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
        // The flags whose subsystems this pass purged cleanly, and those of a purge that failed.
        var (purged, failed): (Feature, Feature) = ([], [])
        func note(_ index: Int, clean: Bool) {
            let needs = state.withLock { $0.entries[index].needs }
            if clean { purged.formUnion(needs) } else { failed.formUnion(needs) }
        }
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
                note(index, clean: await purge(index, subsystem))
            case .purge:
                note(index, clean: await purge(index, subsystem))
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
        // The purges a "no" owed that are done now (nothing is written when none was owed).
        let done = purged.subtracting(failed)
        if !done.isEmpty { privacy.purgesFinished(done) }
    }

    /// Purges `subsystem` and records it; whether it purged without failure.
    private func purge(_ index: Int, _ subsystem: any Subsystem) async -> Bool {
        let outcome = await call(index, "purge") { await subsystem.purge() }
        let report: PurgeReport
        switch outcome {
        case .success(let purged): report = purged
        case .failure(let error): report = PurgeReport(failures: ["purge failed: \(error)"])
        case nil: report = PurgeReport(failures: ["purge cancelled by a revocation before it finished"])
        }
        update(index, phase: .stopped, event: .purged(report))
        return report.failures.isEmpty
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

    private enum Action {
        case start
        case stopAndPurge(disabled: Feature)
        case purge
        case stopForShutdown
    }
}

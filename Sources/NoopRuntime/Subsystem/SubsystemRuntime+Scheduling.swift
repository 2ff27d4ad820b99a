import FeatureGate

extension SubsystemRuntime {
    /// Records a change for the next pass. `epoch` is `nil` for the runtime's long-lived observer, or the pass
    /// whose observer delivered it: a subsystem started by pass *e* takes edges only from pass *e*'s observer,
    /// which was registered before that pass read the gate, so a change made before it started (and delivered
    /// late by another thread) is never an edge for it.
    func noteChange(_ change: FeatureChange, from epoch: UInt64?) {
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

    func spawnWorker() {
        Task { await self.drain() }
    }

    func waitFor(_ ticket: UInt64) async {
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
    func drain() async {
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
}

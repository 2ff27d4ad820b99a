extension PrivacyManager {
    /// How many times a flag of `features` has gone from enabled to disabled in the effective set since the
    /// manager was created: a revocation counter, whatever layer revoked (the app, consent, the kill switch).
    ///
    /// It only grows. Two readings that differ prove a revocation happened in between, without waiting for
    /// observers, which may be told late while another thread is still delivering older changes: an SDK that holds
    /// data captured under a feature reads it at capture and again before the data leaves, and drops the data if it
    /// moved. Read it after ``isEnabled(_:)``, never before: a revocation is counted before the gate shows it
    /// closed, so an open gate read first and an unchanged count read after prove no revocation came between.
    ///
    /// Lock-free and allocation-free: one atomic load per flag in `features` (the writer counts before it
    /// publishes the closed gate, with release ordering; the gate's load acquires).
    @inlinable
    public func disableCount(of features: Feature) -> UInt64 {
        var total: UInt64 = 0
        var bits = features.rawValue
        while bits != 0 {
            total &+= UInt64(disableCounts[bits.trailingZeroBitCount].load(ordering: .acquiring))
            bits &= bits - 1
        }
        return total
    }

    /// Counts one revocation of each flag in `closing`. Called under `state`'s lock, before the gate shows them
    /// closed; the release pairs with the acquiring loads of ``disableCount(of:)``.
    private func countDisables(of closing: Feature) {
        var bits = closing.rawValue
        while bits != 0 {
            disableCounts[bits.trailingZeroBitCount].wrappingAdd(1, ordering: .releasing)
            bits &= bits - 1
        }
    }

    /// Recomputes the effective set and queues a change if it moved. Returns whether the caller must deliver.
    func publish(_ state: inout State) -> Bool {
        let effective = state.rules.effective
        let withheld = state.withheld.reduce(Feature()) { $0.union($1) }
        unswitchedBits.store(state.rules.unswitched.subtracting(withheld).rawValue, ordering: .releasing)
        guard effective != state.effective else {
            effectiveBits.store(effective.subtracting(withheld).rawValue, ordering: .releasing)
            return false
        }
        state.sequence += 1
        // Counted before the gate shows the change (see disableCount(of:)).
        let closing = state.effective.subtracting(effective)
        countDisables(of: closing.subtracting(state.countedEarly))
        state.countedEarly.subtract(closing)
        state.pending.append((state.sequence, FeatureChange(previous: state.effective, current: effective)))
        state.effective = effective
        effectiveBits.store(effective.subtracting(withheld).rawValue, ordering: .releasing)
        guard !state.isDelivering else { return false }
        state.isDelivering = true
        return true
    }

    /// Closes `features` for every check at once (one atomic store), before a take-away that must first write or
    /// wait (a consent denial's ledger append, revoke-all's record, a kill switch payload), and keeps them closed
    /// until `body` returns; the take-away itself keeps them closed after. Observers hear of the change when the
    /// take-away applies, in order with everything else, not here. Waits for nothing another process holds.
    package func withholding<Result>(_ features: Feature, _ body: () throws -> Result) rethrows -> Result {
        beginWithholding(features)
        defer { endWithholding(features) }
        return try body()
    }

    /// Closes `features` for every check at once, until the matching ``endWithholding(_:)`` (see
    /// ``withholding(_:_:)``).
    package func beginWithholding(_ features: Feature) {
        guard !features.isEmpty else { return }
        state.withLock { state in
            // Counted before the gate shows them closed (see disableCount(of:)), once: not again when the take-away
            // closes them for observers too.
            let shown = state.effective.subtracting(state.withheld.reduce(Feature()) { $0.union($1) })
            let closing = shown.intersection(features).subtracting(state.countedEarly)
            countDisables(of: closing)
            state.countedEarly.formUnion(closing)
            state.withheld.append(features)
            _ = publish(&state)
        }
    }

    /// Ends one ``beginWithholding(_:)`` of `features`: checks show what the rules say again.
    package func endWithholding(_ features: Feature) {
        guard !features.isEmpty else { return }
        state.withLock { state in
            if let index = state.withheld.firstIndex(of: features) { state.withheld.remove(at: index) }
            // What the take-away did not close after all opens again: its next closing counts.
            state.countedEarly.formIntersection(state.withheld.reduce(Feature()) { $0.union($1) })
            _ = publish(&state)
        }
    }
}

import Foundation

// MARK: - A revocation in progress

extension PrivacyManager {
    /// The revoke-all that began and has not finished, as the store recorded it; `nil` when there is none.
    ///
    /// Read from the store at start-up: after a process died during revoke-all, the gate starts revoked and this
    /// says what is left to do (see `PendingRevocation`).
    package var pendingRevocation: PendingRevocation? { revocation.withLock { $0 } }

    /// Records that a revocation began, before anything else changes: one read-modify-write of the store, under its
    /// lock, that keeps `pending` (or the one already pending, joined by it: see
    /// `PendingRevocation.joined(by:)`), decides every flag off (the catalog's and any other the record holds) and
    /// refuses `categories`. Then applies the same in memory.
    ///
    /// - Returns: The pending revocation now recorded, and the store's error when it could not be written (the gate
    ///   is revoked in memory all the same).
    package func beginRevocation(
        _ pending: PendingRevocation, refusing categories: Set<ConsentCategory>
    ) -> (pending: PendingRevocation, error: (any Error)?) {
        // Everything closes at once, before the store is written or its lock waited for (never longer than
        // `AtomicFile.lockWaitBound`, and never under the in-process lock).
        withholding(catalog.allFeatures) { beginRevocationWithheld(pending, refusing: categories) }
    }

    private func beginRevocationWithheld(
        _ pending: PendingRevocation, refusing categories: Set<ConsentCategory>
    ) -> (pending: PendingRevocation, error: (any Error)?) {
        var recorded = pending
        var owed: Feature?
        var error: (any Error)? =
            withStoreLock(takesAway: true) {
                recordRevocation(pending, refusing: categories, as: &recorded, owing: &owed)
            }
            ?? Self.busyError
        if let busy = error, AtomicFile.isLockBusy(busy), store.recordFile == nil {
            diagnosticHandler?(.takeAwayNotDurable(store: String(describing: store), error: StoreKeepsNoFile()))
        }
        if let busy = error, AtomicFile.isLockBusy(busy), let file = store.recordFile {
            // Another process keeps the lock: the pending record is made durable as an intent, without it, and
            // the next holder of the lock (or the next start) folds it into the gate state.
            if let earlier = revocation.withLock({ $0 }) { recorded = earlier.joined(by: pending) }
            let location = FileLocation(file: file)
            let intent = TakeAwayIntent(
                stateFile: location.components[0], disable: catalog.allFeatures, refuse: categories,
                pendingRevocation: recorded)
            let (written, diagnostics) = Self.recordIntent(
                intent, in: location.anchor, store: String(describing: store))
            if written {
                revocation.withLock { $0 = recorded }
                state.withLock { $0.intended = intent.applied(to: $0.intended ?? $0.saved) }
                error = nil
            }
            for diagnostic in diagnostics { diagnosticHandler?(diagnostic) }
        }
        // Written under the lock: the store has the revocation, the purges it owes included, so memory takes it as
        // saved (one write, not a second one that adds the owed purges).
        update(isSavedElsewhere: owed != nil) { state in
            state.rules.revoke(refusing: categories)
            if let owed { state.owedPurges = owed }
        }
        return (recorded, error)
    }

    /// One try of ``beginRevocation(_:refusing:)``'s write, under the in-process lock.
    /// `owed` is set to the purges the written record owes: the flags it newly decided off join those it owed.
    private func recordRevocation(
        _ pending: PendingRevocation, refusing categories: Set<ConsentCategory>, as recorded: inout PendingRevocation,
        owing owed: inout Feature?
    ) -> (any Error)? {
        state.withLock { _ in
            if let earlier = revocation.withLock({ $0 }) { recorded = earlier.joined(by: pending) }
            var owes = Feature()
            do {
                try store.update { data in
                    let before =
                        data.flatMap { try? FeatureStateRecord(decoding: $0) }
                        ?? FeatureStateRecord(enabledFeatures: [], decidedFeatures: [])
                    var record = before
                    if let earlier = record.pendingRevocation { recorded = earlier.joined(by: pending) }
                    record.decidedFeatures.formUnion(catalog.allFeatures.union(record.enabledFeatures))
                    record.enabledFeatures = []
                    record.revokedFeatures = record.decidedFeatures
                    record.deniedConsentCategories.formUnion(categories)
                    record.pendingRevocation = recorded
                    record.purgeOwedFeatures.formUnion(FeatureStateRecord.newlyDecidedOff(from: before, to: record))
                    owes = record.purgeOwedFeatures
                    return record.encoded()
                }
            } catch {
                return error
            }
            owed = owes
            revocation.withLock { $0 = recorded }
            return nil
        }
    }

    /// Changes the pending revocation whose key is `key`, in the store (a read-modify-write under its lock) and in
    /// memory; removes it once `isFinished`. Does nothing when none with that key is pending.
    ///
    /// Waits at most `bound` for another process's lock on the store.
    ///
    /// - Throws: The store's error; memory is left as it was then, so the step is done again next time.
    package func updatePendingRevocation(
        key: UUID, waitingAtMost bound: Duration = AtomicFile.lockWaitBound, _ change: (inout PendingRevocation) -> Void
    ) throws {
        // The store's lock is waited for (briefly) before the in-process lock is taken, never under it.
        let outcome = withStoreLock(waitingAtMost: bound) {
            Result { try updatePendingRevocationOnce(key: key, change) }
        }
        guard let outcome else { throw Self.busyError }
        try outcome.get()
    }

    /// Makes ``updatePendingRevocation(key:waitingAtMost:_:)``'s change in the background once the store's lock is
    /// free (no sooner than `delay` seconds), trying again with growing pauses while another process takes it
    /// first. Nobody waits for it: what it records is owed durably all the same (the pending record already in the
    /// store says what is left), so a kill before it lands only leaves the next start more to finish.
    package func updatePendingRevocationWhenLockFree(
        key: UUID, after delay: Double = 0.01, _ change: @escaping @Sendable (inout PendingRevocation) -> Void
    ) {
        whenStoreLockFree(after: delay) { [weak self] in
            do {
                try self?.updatePendingRevocation(key: key, waitingAtMost: .zero, change)
            } catch  where AtomicFile.isLockBusy(error) {
                self?.updatePendingRevocationWhenLockFree(key: key, after: min(delay * 2, 1), change)
            } catch {
                // Another error: the record keeps what is left, and the next start does it again.
            }
        }
    }

    /// One try of ``updatePendingRevocation(key:_:)``, under the in-process lock.
    private func updatePendingRevocationOnce(key: UUID, _ change: (inout PendingRevocation) -> Void) throws {
        try state.withLock { _ in
            guard var pending = revocation.withLock({ $0 }), pending.requestKey == key else { return }
            change(&pending)
            let next = pending.isFinished ? nil : pending
            try store.update { data in
                guard let data, var record = try? FeatureStateRecord(decoding: data),
                    record.pendingRevocation?.requestKey == key
                else { return nil }
                record.pendingRevocation = next
                return record.encoded()
            }
            revocation.withLock { $0 = next }
        }
    }
}

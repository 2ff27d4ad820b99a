import Foundation

extension PrivacyManager {
    /// Whether changes are held in memory because the stored record could not be read (see "Start-up").
    public var isHoldingWrites: Bool { state.withLock { $0.rules.isHoldingWrites } }

    /// Tries to read a stored record that could not be read at start-up; when it can be read now, merges the
    /// changes made since start-up into it and saves the result. Does nothing when no writes are held.
    ///
    /// Every change retries on its own; call this when the record may have become readable without a change (on
    /// iOS, when protected data becomes available).
    ///
    /// - Returns: Whether writes are still held.
    @discardableResult
    public func retryHeldStore() -> Bool {
        let outcome = state.withLock { state -> (PrivacyManagerDiagnostic?, Bool, Bool) in
            guard state.rules.isHoldingWrites else { return (nil, false, false) }
            let diagnostic = AtomicFile.$lockWait.withValue(.zero) { retryHeldRecord(&state) }
            return (diagnostic, publish(&state), state.rules.isHoldingWrites)
        }
        if let diagnostic = outcome.0 { diagnosticHandler?(diagnostic) }
        if outcome.1 { deliverPending() }
        return outcome.2
    }

    /// Tries the held writes again in the background, while another process's lock keeps them held; stops once they
    /// are saved or held for another reason (an unreadable store waits for a change, ``retryHeldStore()`` or a
    /// reload).
    ///
    /// One retry at a time, and it waits for the lock as long as it takes, on a background thread: nobody waits on
    /// it, and each bounded wait that gave up would leave a thread parked on the lock until the holder lets go.
    func retryHeldLater() {
        let schedule = heldRetryScheduled.withLock { scheduled in
            defer { scheduled = true }
            return !scheduled
        }
        guard schedule else { return }
        let fileSystem = FileSystem.current
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + 0.01) { [weak self] in
            guard let self else { return }
            // Cleared before the attempt: a write held during it schedules the next one.
            self.heldRetryScheduled.withLock { $0 = false }
            let outcome = FileSystem.$current.withValue(fileSystem) {
                self.withStoreLock(waitingAtMost: nil) {
                    self.state.withLock { state -> (PrivacyManagerDiagnostic?, Bool) in
                        guard state.rules.isHoldingWrites else { return (nil, false) }
                        return (self.retryHeldRecord(&state), self.publish(&state))
                    }
                }
            }
            guard let (last, deliver) = outcome, !(last?.isLockBusy ?? false) else {
                FileSystem.$current.withValue(fileSystem) { self.retryHeldLater() }
                return
            }
            if deliver { self.deliverPending() }
            if let last { self.diagnosticHandler?(last) }
        }
    }

    /// Reads the store again; when it answers, takes its record as the base for every flag and refusal not
    /// changed since start-up, saves the merge (one read-modify-write under the store's lock), and stops holding
    /// writes. A record that is there but unusable (a link, a FIFO, too large) is replaced. A record in a newer
    /// format is left as it is and reported, and writes stay held: its decisions and refusals cannot be read, so
    /// undecided flags stay off. Called under the lock.
    func retryHeldRecord(_ state: inout State) -> PrivacyManagerDiagnostic {
        let storeName = String(describing: store)
        // A newer version's intent waits to be folded by that version: the record is not its own until then.
        if let newer = Self.pendingIntents(for: store).newer {
            return .storeUnreadableWritesHeld(store: storeName, error: newer)
        }
        var wasRead = false
        var newer: PrivacyManagerDiagnostic.StoredStateError?
        do {
            try store.update { data in
                wasRead = true
                if let data, case .failure(let error) = Self.storedForUpdate(data) {
                    newer = error
                    return nil
                }
                return mergeHeldWrites(into: &state, stored: data)
            }
        } catch  where !wasRead && AtomicFile.isLockBusy(error) {
            return .storeBusyWritesHeld(store: storeName, error: error)
        } catch  where !wasRead && Self.mayBecomeReadable(error) {
            return .storeUnreadableWritesHeld(store: storeName, error: error)
        } catch  where !wasRead {
            do { try store.save(mergeHeldWrites(into: &state, stored: nil) ?? state.rules.record.encoded()) } catch {
                return .saveFailed(store: storeName, error: error)
            }
        } catch {
            return .saveFailed(store: storeName, error: error)
        }
        if let newer { return .saveFailed(store: storeName, error: newer) }
        state.saved = state.rules.record
        state.intended = nil
        state.deferred = nil
        return .storeReadableAgain(store: storeName)
    }

    /// Merges the changes held since start-up over `stored` (the record just read) and stops holding writes;
    /// returns the record to save, or `nil` when it equals `stored`.
    private func mergeHeldWrites(into state: inout State, stored data: Data?) -> Data? {
        var base =
            (data.flatMap { try? FeatureStateRecord(decoding: $0) })
            ?? FeatureStateRecord(enabledFeatures: [], decidedFeatures: [])
        // As at start-up, an unfinished revocation is not reset: what it switched off stays off.
        let resets = configuration.resetEnabledFeatures && base.pendingRevocation == nil
        if resets { base = base.reset }
        state.rules.merge(undecidedSource: resets ? .reset : .configuration, stored: base)
        // Flags this catalog lacks keep their bits and decisions, and a revocation another process began stays.
        let record = state.rules.record
        let unknown = catalog.allFeatures.symmetricDifference(FeatureStateRecord.everyFlag)
        var merged = FeatureStateRecord(
            enabledFeatures: record.enabledFeatures.union(base.enabledFeatures.intersection(unknown)),
            decidedFeatures: record.decidedFeatures.union(base.decidedFeatures.intersection(unknown)),
            deniedConsentCategories: record.deniedConsentCategories)
        merged.revokedFeatures = record.revokedFeatures.union(base.revokedFeatures.intersection(unknown))
        merged.pendingRevocation = base.pendingRevocation
        merged.ledgerLength = Self.later(base.ledgerLength, state.ledgerLength)
        // What the merge decides off that the stored record had not owes its subsystems' purge.
        merged.purgeOwedFeatures =
            base.purgeOwedFeatures.union(FeatureStateRecord.newlyDecidedOff(from: base, to: merged))
        state.owedPurges = merged.purgeOwedFeatures
        let encoded = merged.encoded()
        return encoded == data ? nil : encoded
    }
}

// MARK: - Saves that failed

extension PrivacyManager {
    /// The longest pause between two retries of a save that failed: 30 s.
    static let failedSaveRetryLimit = 30.0

    /// Tries the change whose save failed (a full or read-only disk, an I/O error) again in the background, with
    /// pauses that double from `delay` up to ``failedSaveRetryLimit``, while the process lives, until it is saved
    /// (then reports ``PrivacyManagerDiagnostic/failedSaveLanded(store:attempts:)``) or a later save or held write
    /// took it over. One retry at a time; it waits for the lock on its background thread, where nobody waits on it.
    func retryFailedSaveLater(after delay: Double = 0.1, attempt: Int = 1) {
        let schedule = failedSaveRetryScheduled.withLock { scheduled in
            defer { scheduled = true }
            return attempt > 1 || !scheduled
        }
        guard schedule else { return }
        let fileSystem = FileSystem.current
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self else { return }
            let outcome = FileSystem.$current.withValue(fileSystem) {
                self.withStoreLock(waitingAtMost: nil) {
                    self.state.withLock { state -> PrivacyManagerDiagnostic?? in
                        let after = state.rules.record
                        // Saved since by a later change, or held (its own retry saves it): nothing left here.
                        guard !state.rules.isHoldingWrites, after != state.base else { return .none }
                        let diagnostic = self.save(
                            from: state.base, to: after, ledgerLength: state.ledgerLength, owed: &state.owedPurges)
                        guard diagnostic == nil else { return .some(diagnostic) }
                        state.saved = after
                        state.intended = nil
                        state.deferred = nil
                        return .some(nil)
                    }
                }
            }
            switch outcome {
            case .some(.some(nil)):
                self.failedSaveRetryScheduled.withLock { $0 = false }
                self.diagnosticHandler?(.failedSaveLanded(store: String(describing: self.store), attempts: attempt))
            case .some(.some(let diagnostic?)) where diagnostic.isFailedWrite || diagnostic.isLockBusy:
                FileSystem.$current.withValue(fileSystem) {
                    self.retryFailedSaveLater(
                        after: min(delay * 2, Self.failedSaveRetryLimit), attempt: attempt + 1)
                }
            default:
                self.failedSaveRetryScheduled.withLock { $0 = false }
            }
        }
    }
}

extension PrivacyManagerDiagnostic {
    /// Whether this reports a save the file system refused (full, read-only, an I/O error): a fault that may clear,
    /// so the save is retried. A lock another process kept, or a record of a newer format, is not one.
    var isFailedWrite: Bool {
        guard case .saveFailed(_, let error) = self, let error = error as? FileStoreError else { return false }
        return !AtomicFile.isLockBusy(error) && !error.isHostileContent
    }
}

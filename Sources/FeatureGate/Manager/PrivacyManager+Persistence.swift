import Foundation

extension PrivacyManager {
    /// Waits for the store's lock another process held, outside the in-process lock, for up to
    /// ``AtomicFile/lockWaitBound``, and saves under it; past the bound, holds the writes (``isHoldingWrites``),
    /// reports ``PrivacyManagerDiagnostic/storeBusyWritesHeld(store:error:)`` and retries later. The record saved is
    /// the state as it is once the lock is taken, so a change made meanwhile on another thread goes with it.
    func saveWhenLockFree() {
        // A take-away returns within the bound whoever holds the lock, this process's own fold included.
        let takesAway = state.withLock { state in
            let (saved, after) = (state.intended ?? state.base, state.rules.record)
            return !FeatureStateRecord.newlyDecidedOff(from: saved, to: after).isEmpty
                || !after.deniedConsentCategories.isSubset(of: saved.deniedConsentCategories)
        }
        let last = withStoreLock(takesAway: takesAway) {
            state.withLock { state -> PrivacyManagerDiagnostic? in
                if state.rules.isHoldingWrites { return retryHeldRecord(&state) }
                let after = state.rules.record
                guard after != state.base else { return nil }
                let diagnostic = save(
                    from: state.base, to: after, ledgerLength: state.ledgerLength, owed: &state.owedPurges)
                if diagnostic == nil {
                    state.saved = after
                    state.intended = nil
                    state.deferred = nil
                }
                return diagnostic
            }
        }
        switch last {
        case .some(nil): return
        case .some(let diagnostic?) where !diagnostic.isLockBusy:
            diagnosticHandler?(diagnostic)
            if diagnostic.isFailedWrite { retryFailedSaveLater() }
            return
        default: break  // Another process kept the lock.
        }
        let outcome = state.withLock { state -> (PrivacyManagerDiagnostic?, Bool) in
            guard !state.rules.isHoldingWrites else { return (nil, false) }
            // Held as an unreadable store's writes are: merged over the record when the lock is free again.
            state.rules.holdWrites(unsavedSince: state.base)
            return (.storeBusyWritesHeld(store: String(describing: store), error: Self.busyError), publish(&state))
        }
        // What the held change takes away is on disk before the call returns, without the lock.
        let recorded = recordTakeAwayIntent()
        if let diagnostic = outcome.0 { diagnosticHandler?(diagnostic) }
        for diagnostic in recorded { diagnosticHandler?(diagnostic) }
        if outcome.1 { deliverPending() }
        retryHeldLater()
    }

    /// Makes what the held writes take away (flags decided off, consent refusals) durable as one intent
    /// (``IntentJournal``), without the store's lock: what this process already recorded so is not recorded again.
    /// Returns what to report: a foreign entry moved aside, or the take-away left in memory only.
    func recordTakeAwayIntent() -> [PrivacyManagerDiagnostic] {
        let storeName = String(describing: store)
        guard let file = store.recordFile else {
            return [.takeAwayNotDurable(store: storeName, error: StoreKeepsNoFile())]
        }
        let location = FileLocation(file: file)
        let intent = state.withLock { state -> TakeAwayIntent? in
            let base = state.intended ?? state.base
            let after = state.rules.record
            let intent = TakeAwayIntent(
                stateFile: location.components[0],
                disable: after.decidedFeatures.subtracting(after.enabledFeatures)
                    .subtracting(base.decidedFeatures.subtracting(base.enabledFeatures)),
                refuse: after.deniedConsentCategories.subtracting(base.deniedConsentCategories))
            guard !intent.isEmpty else { return nil }
            state.intended = intent.applied(to: base)
            return intent
        }
        guard let intent else { return [] }
        let (recorded, diagnostics) = Self.recordIntent(intent, in: location.anchor, store: storeName)
        if !recorded {
            // Not on disk: the next try records it again.
            state.withLock { $0.intended = nil }
        }
        return diagnostics
    }

    /// Writes `intent` into the intents of the directory `anchor`: whether it was written, and what to report (a
    /// foreign entry moved aside from the intents' folder; ``PrivacyManagerDiagnostic/takeAwayNotDurable(store:error:)``
    /// when it could not be written). Every path that makes a take-away durable goes through here.
    static func recordIntent(
        _ intent: TakeAwayIntent, in anchor: String, store: @autoclosure () -> String,
        durability: AtomicFile.Durability = .full
    ) -> (recorded: Bool, diagnostics: [PrivacyManagerDiagnostic]) {
        do {
            let movedAside = try IntentJournal.record(intent, in: anchor, durability: durability)
            let moved = movedAside.map {
                PrivacyManagerDiagnostic.foreignEntryMovedAside(
                    path: anchor + "/" + IntentJournal.directoryName, movedTo: $0)
            }
            return (true, moved.map { [$0] } ?? [])
        } catch {
            return (false, [.takeAwayNotDurable(store: store(), error: error)])
        }
    }

    /// Why a take-away of a store that names no file (``FeatureStore/recordFile``) cannot be made durable.
    struct StoreKeepsNoFile: Error, CustomStringConvertible {
        var description: String {
            "the store names no file of a data directory (FeatureStore.recordFile is nil), so no pending change can "
                + "be written beside it"
        }
    }

    /// The further of two ledger lengths.
    static func later(_ one: Int?, _ other: Int?) -> Int? {
        guard let one else { return other }
        return max(one, other ?? one)
    }

    /// Notes how far into the consent ledger this process's consent changes reached (after an append, under the
    /// lock): the next save of the gate state records it.
    package func noteLedgerLength(_ length: Int, ifReflecting start: Int? = nil) {
        state.withLock { state in
            if let start, let reflected = state.ledgerLength, reflected != start { return }
            state.ledgerLength = Self.later(state.ledgerLength, length)
        }
    }

    /// How far into the consent ledger the stored gate state reflects, read now (call it with the store's lock
    /// held): the point start-up read when the record cannot be read.
    package func storedLedgerPoint() -> Int? {
        guard let data = try? store.load(), let record = try? FeatureStateRecord(decoding: data) else {
            return ledgerPointAtStart
        }
        return record.ledgerLength
    }

    /// The gate state's record, as this process holds it now.
    var currentRecord: FeatureStateRecord { state.withLock { $0.rules.record } }

    /// What a save reports when another process kept the lock past the bound.
    static var busyError: FileStoreError { FileStoreError(path: "", operation: .lock, code: EWOULDBLOCK) }

    /// Runs `body` holding the store's inter-process lock, taken before (never under) the in-process lock and waited
    /// for at most `bound`; `nil` when another process kept it that long. Another store (one wrapping a file store,
    /// say) runs `body` at once, its operations waiting at most `bound` for any lock they take.
    func withStoreLock<Result>(
        waitingAtMost bound: Duration? = AtomicFile.lockWaitBound, takesAway: Bool = false, _ body: () -> Result
    ) -> Result? {
        guard let file = store.recordFile else { return AtomicFile.$lockWait.withValue(bound) { body() } }
        waitForFlusherToLetGo()
        return AtomicFile.withLock(of: file, waitingAtMost: bound, takesAway: takesAway, body)
    }

    /// Runs `body` holding the inter-process lock of the gate state's directory (created if needed), waited for at
    /// most `bound`, so that what `body` writes there (a consent change's ledger record and gate state) is one
    /// critical section: no other process acts in between. Returns `nil` when another process kept the lock that
    /// long; the locks `body`'s own operations take elsewhere wait at most `bound` too. Take-aways are applied before
    /// (``withholding(_:_:)``). Call it outside the manager's own lock; a store that is not a file runs `body` at once.
    package func withStoreLockHeld<Result>(
        waitingAtMost bound: Duration, takesAway: Bool = false, _ body: () -> Result
    ) -> Result? {
        guard let file = store.recordFile else { return AtomicFile.$lockWait.withValue(bound) { body() } }
        waitForFlusherToLetGo()
        return AtomicFile.withLock(
            of: file, waitingAtMost: bound, inside: bound, create: true, takesAway: takesAway, body)
    }

    /// Calls `action` on a background thread once the gate state's directory lock is free (no sooner than `delay`
    /// seconds): waited for there, as long as it takes, and let go before `action` runs, so nobody waits on it.
    package func whenStoreLockFree(after delay: Double, _ action: @escaping @Sendable () -> Void) {
        let fileSystem = FileSystem.current
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self else { return }
            FileSystem.$current.withValue(fileSystem) {
                _ = self.withStoreLock(waitingAtMost: nil) {}
                action()
            }
        }
    }

    /// Removes the temporary files start-up left because another process held the lock, in the background, as
    /// soon as the lock is free (tried with growing pauses, for up to about a minute).
    static func removeTemporariesLater(
        in directory: URL, store: String, diagnosticHandler: (@Sendable (PrivacyManagerDiagnostic) -> Void)?,
        delay: Double = 0.1
    ) {
        let fileSystem = FileSystem.current
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay) {
            let removal = FileSystem.$current.withValue(fileSystem) {
                AtomicFile.$lockWait.withValue(.seconds(1)) { AtomicFile.removeTemporaries(in: directory) }
            }
            if removal.failures.contains(where: AtomicFile.isLockBusy) {
                if delay < 30 {
                    removeTemporariesLater(
                        in: directory, store: store, diagnosticHandler: diagnosticHandler, delay: delay * 2)
                }
                return
            }
            for failure in removal.failures {
                diagnosticHandler?(.temporaryFileNotRemoved(store: store, error: failure))
            }
        }
    }

    /// Saves this process's change from `before` (what it last saved or read, so a change whose save failed goes
    /// with the next one) to `after` as a read-modify-write of the store: the change is made over the record read
    /// under the store's lock, so decisions and refusals other processes saved meanwhile, and flags this catalog
    /// lacks, are kept (`FeatureStateRecord.merging(changeFrom:to:)`). A missing or corrupt record is replaced by
    /// this process's own. A record of a newer format is left as it is and reported: writing
    /// this format over it would drop what this version does not understand. Called under the lock.
    ///
    /// A flag the change decides off owes its subsystems' purge, recorded in the same write
    /// (``FeatureStateRecord/purgeOwedFeatures``); `owed` is set to what the saved record owes.
    func save(
        from before: FeatureStateRecord, to after: FeatureStateRecord, ledgerLength: Int? = nil,
        owed: inout Feature
    ) -> PrivacyManagerDiagnostic? {
        var newer: PrivacyManagerDiagnostic.StoredStateError?
        var saved: Feature?
        do {
            try store.update { data in
                var base = before
                if let data {
                    switch Self.storedForUpdate(data) {
                    case .failure(let error):
                        newer = error
                        return nil
                    case .success(let record): base = record ?? before
                    }
                }
                var record = base.merging(changeFrom: before, to: after)
                record.ledgerLength = Self.later(record.ledgerLength, ledgerLength)
                record.purgeOwedFeatures.formUnion(FeatureStateRecord.newlyDecidedOff(from: before, to: after))
                saved = record.purgeOwedFeatures
                let merged = record.encoded()
                return merged == data ? nil : merged
            }
        } catch {
            return .saveFailed(store: String(describing: store), error: error)
        }
        if let saved { owed = saved }
        return newer.map { .saveFailed(store: String(describing: store), error: $0) }
    }

    /// A record read under the store's lock for a read-modify-write: the record (`nil` when corrupt, so it is
    /// replaced), or the error of a record in a newer format, which is left as it is: writing this format over it
    /// would drop what this version does not understand.
    static func storedForUpdate(_ data: Data) -> Result<FeatureStateRecord?, PrivacyManagerDiagnostic.StoredStateError>
    {
        do throws(PrivacyManagerDiagnostic.StoredStateError) {
            return .success(try FeatureStateRecord(decoding: data))
        } catch .unsupportedVersion(let found, let supported) {
            return .failure(.unsupportedVersion(found: found, supported: supported))
        } catch {
            return .success(nil)
        }
    }

    /// Whether a load error may pass (permissions, data protection, an I/O error), so the record must be kept
    /// rather than replaced. A record that is there but wrong (a link, a FIFO, a file over its limit) is not.
    static func mayBecomeReadable(_ error: any Error) -> Bool {
        !((error as? FileStoreError)?.isHostileContent ?? false)
    }
}

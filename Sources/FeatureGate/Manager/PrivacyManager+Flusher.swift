import Foundation

// MARK: - Take-aways flushed off the caller's thread

extension PrivacyManager {
    /// The flusher's bookkeeping (``State/flush``, under the manager's own lock: a lock of its own cost launch its
    /// allocations): how many passes were asked for and done, whether one runs, and who waits.
    struct FlushQueue {
        var requested: UInt64 = 0
        var completed: UInt64 = 0
        var isRunning = false
        /// Whether the last pass completed made everything it took durable.
        var lastSucceeded = true
        /// Whether a pass holds the store's lock now: it does only bounded work of its own there (appends, a write,
        /// deletions), so this process's other writers wait for it to let go (``waitForFlusherToLetGo()``).
        var holdsLock = false
        var waiters: [(ticket: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    /// Records the change `state` holds since what the store will hold (``State/base``) as an unflushed intent, when
    /// that change only takes away (flags decided off, consent refused) and the store is a file no lock of this
    /// thread holds: the caller's thread then makes no flush and takes no lock. Called under the in-process lock, so
    /// the intent is on its way before any save that could follow it reads the directory.
    ///
    /// Returns `nil` when the change is not deferred (the caller saves it as before), otherwise what to report (a
    /// foreign entry moved aside from the intents' folder). A deferred change is published by the caller as any
    /// take-away is, and made durable by the flusher (``requestFlush()``).
    ///
    /// `records` (a consent refusal's, for the ledger named `ledgerFile` in the same directory) go into the intent
    /// with the change: the flusher appends them to the ledger before it writes the gate state.
    func deferTakeAway(
        _ state: inout State, records: [ConsentRecord] = [], ledgerFile: String? = nil
    ) -> [PrivacyManagerDiagnostic]? {
        guard let file = store.recordFile, AtomicFile.heldLockPath == nil else { return nil }
        let base = state.base
        let after = state.rules.record
        let intent = TakeAwayIntent(
            stateFile: FileLocation(file: file).components[0], ledgerFile: ledgerFile,
            disable: after.decidedFeatures.subtracting(after.enabledFeatures)
                .subtracting(base.decidedFeatures.subtracting(base.enabledFeatures)),
            refuse: after.deniedConsentCategories.subtracting(base.deniedConsentCategories), records: records)
        // Deferred only when the intent is the whole change: what gives something back is saved on the caller's
        // thread, after the intents before it are folded (the lock's holder folds them first).
        let expected = intent.applied(to: base)
        guard !intent.isEmpty, expected.enabledFeatures == after.enabledFeatures,
            expected.decidedFeatures == after.decidedFeatures,
            expected.deniedConsentCategories == after.deniedConsentCategories,
            expected.revokedFeatures == after.revokedFeatures
        else { return nil }
        let anchor = FileLocation(file: file).anchor
        let (recorded, diagnostics) = Self.recordIntent(
            intent, in: anchor, store: String(describing: store), durability: .unflushed)
        // Not in the operating system's hands: saved on the caller's thread, as before.
        guard recorded else { return nil }
        var deferred = state.deferred ?? TakeAwayIntent(stateFile: intent.stateFile)
        deferred.disable |= intent.disable
        deferred.refuse = Set(deferred.refuse).union(intent.refuse).sortedByName()
        state.deferred = deferred
        state.deferrals &+= 1
        // What the fold records as owed (the intent's flags decided off), memory knows at once, as after a save.
        state.owedPurges.formUnion(FeatureStateRecord.newlyDecidedOff(from: base, to: after))
        return diagnostics
    }

    /// Applies the consent refusal `record` (its edge over the gate) as a deferred take-away: an unflushed intent
    /// carries the record and the refusal, and the flusher appends the record to the ledger named `ledgerFile` (the
    /// commit point) and writes the gate state off the caller's thread. Returns `false`, changing nothing, when the
    /// change cannot be deferred (the store is no file of the ledger's directory, writes are held, this thread holds
    /// the lock, the intent could not be written): the caller then records it under the lock, as before.
    func deferConsentRefusal(
        _ record: ConsentRecord, policy: ConsentPolicy, decisions: [ConsentCategory: ConsentDecision],
        ledgerFile: String
    ) -> Bool {
        let outcome = state.withLock { state -> (deliver: Bool, diagnostics: [PrivacyManagerDiagnostic])? in
            guard !state.rules.isHoldingWrites else { return nil }
            var changed = state
            changed.rules.applyConsentEdge(
                record.category, edge: record.newStatus, policy: policy, decisions: decisions)
            guard let diagnostics = deferTakeAway(&changed, records: [record], ledgerFile: ledgerFile) else {
                return nil
            }
            state = changed
            return (publish(&state), diagnostics)
        }
        guard let outcome else { return false }
        for diagnostic in outcome.diagnostics { diagnosticHandler?(diagnostic) }
        if outcome.deliver { deliverPending() }
        requestFlush()
        return true
    }

    /// Asks the flusher for a pass that starts after this call, starting it if none runs: one background pass at a
    /// time per manager, and every change deferred while one runs shares the next (group commit). Returns the pass's
    /// ticket, for ``synchronize()``.
    @discardableResult
    func requestFlush() -> UInt64 {
        let (ticket, start) = state.withLock { state -> (UInt64, Bool) in
            state.flush.requested &+= 1
            defer { state.flush.isRunning = true }
            return (state.flush.requested, !state.flush.isRunning)
        }
        if start { runFlushes(fileSystem: FileSystem.current) }
        return ticket
    }

    /// Runs passes on a background queue until none is asked for; a pass that found the lock held by another
    /// process waits (growing pauses) and tries again, without counting as done.
    private func runFlushes(fileSystem: FileSystem?, after delay: Double = 0) {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self else { return }
            let target = self.state.withLock { $0.flush.requested }
            guard let succeeded = FileSystem.$current.withValue(fileSystem, operation: { self.flushPass() })
            else {
                // Another process kept the lock: the pass is tried again, the changes are in the intents meanwhile.
                self.runFlushes(fileSystem: fileSystem, after: min(max(delay * 2, 0.01), 1))
                return
            }
            let (ready, again) = self.state.withLock { state -> ([CheckedContinuation<Bool, Never>], Bool) in
                state.flush.completed = max(state.flush.completed, target)
                state.flush.lastSucceeded = succeeded
                let ready = state.flush.waiters.filter { $0.ticket <= target }.map(\.continuation)
                state.flush.waiters.removeAll { $0.ticket <= target }
                let again = state.flush.requested > target
                if !again { state.flush.isRunning = false }
                return (ready, again)
            }
            for continuation in ready { continuation.resume(returning: succeeded) }
            if again { self.runFlushes(fileSystem: fileSystem) }
        }
    }

    /// One pass: under the store's lock (waited for as long as it takes, on the flusher's thread), the intents of
    /// the directory and this process's unsaved change go into the gate state in one write (its data flushed), the
    /// directory is flushed once, and then the intents are deleted. Returns whether everything it took is durable, or
    /// `nil` when the lock could not be taken (the simulated disk's lock, or an `flock` that failed).
    ///
    /// Intents it cannot fold into that one write (consent records, a kill-switch payload, another file's, a newer
    /// format's) are folded first as every lock holder folds them, and held writes are retried as their retry does.
    private func flushPass() -> Bool? {
        guard let file = store.recordFile else { return true }
        let location = FileLocation(file: file)
        let anchor = location.anchor
        let stateFile = location.components[0]
        let storeName = String(describing: store)
        let outcome = AtomicFile.withLock(of: file, waitingAtMost: nil, foldsIntents: false) {
            () -> (Bool, [PrivacyManagerDiagnostic]) in
            state.withLock { $0.flush.holdsLock = true }
            defer { state.withLock { $0.flush.holdsLock = false } }
            let snapshot = state.withLock { state in
                (
                    holding: state.rules.isHoldingWrites, saved: state.saved, base: state.base,
                    after: state.rules.record, ledgerLength: state.ledgerLength, deferrals: state.deferrals
                )
            }
            let pending = IntentJournal.pendingFiles(in: anchor).files
            let ledgerFiles = Set(pending.compactMap(\.intent.ledgerFile))
            let foldsAlone = pending.allSatisfy {
                $0.intent.isReadable && $0.intent.stateFile == stateFile && $0.intent.remote == nil
                    && ($0.intent.records.isEmpty || $0.intent.ledgerFile != nil)
            }
            guard foldsAlone, ledgerFiles.count <= 1, !snapshot.holding, location.components.count == 1 else {
                return commitAsEveryHolderDoes(anchor: anchor)
            }
            // The records first (consent refusals made without the lock), in one append and one flush: the ledger is
            // the commit point, and a gate state a power loss takes back is replayed from it at the next start.
            var appended: Range<Int>?
            if let ledgerFile = ledgerFiles.first {
                let ledgerLocation = FileLocation(anchor: anchor, components: [ledgerFile])
                let taken = pending.flatMap(\.intent.records)
                let records = IntentJournal.recordsNotInLedger(taken, ledger: ledgerLocation)
                // Some already there: a fold killed after its append's write, maybe before its flush.
                if records.count < taken.count { IntentJournal.flushFile(ledgerLocation) }
                let ledger = FileConsentLedger(url: URL(filePath: ledgerLocation.path, directoryHint: .notDirectory))
                do {
                    appended = try ledger.append(contentsOf: records)
                } catch {
                    // The intents keep the records, flushed now: the next holder of the lock, or the next start, tries
                    // again.
                    IntentJournal.flushPending(in: anchor)
                    return (false, [.saveFailed(store: String(describing: ledger), error: error)])
                }
            }
            var newer: PrivacyManagerDiagnostic.StoredStateError?
            var owed: Feature?
            var wrote = false
            var isCommittedByLedger = false
            var point: Int?
            do {
                try AtomicFile.update(
                    location, limit: FileFeatureStore.maximumRecordSize, durability: { _, _ in .dataOnly }
                ) { data in
                    var stored = snapshot.base
                    if let data {
                        switch Self.storedForUpdate(data) {
                        case .failure(let error):
                            newer = error
                            return nil
                        case .success(let record): stored = record ?? snapshot.base
                        }
                    }
                    let folded = pending.reduce(stored) { $1.intent.applied(to: $0) }
                    var record = folded.merging(changeFrom: snapshot.base, to: snapshot.after)
                    record.ledgerLength = Self.later(record.ledgerLength, snapshot.ledgerLength)
                    if let appended, stored.ledgerLength == appended.lowerBound {
                        // The state reflected the ledger up to the records: now to their end. A power loss that takes
                        // this write back leaves the state at their start, and the next start replays them; so when
                        // the records are all this pass takes in, the directory need not be flushed for it.
                        record.ledgerLength = appended.upperBound
                        point = appended.upperBound
                        isCommittedByLedger =
                            snapshot.base == snapshot.after && pending.allSatisfy { !$0.intent.records.isEmpty }
                    }
                    record.purgeOwedFeatures.formUnion(
                        FeatureStateRecord.newlyDecidedOff(from: snapshot.base, to: snapshot.after))
                    owed = record.purgeOwedFeatures
                    let encoded = record.encoded()
                    wrote = encoded != data
                    return wrote ? encoded : nil
                }
            } catch {
                return (false, [.saveFailed(store: storeName, error: error)])
            }
            if let newer {
                // A newer format is left as it is, its intents with it: every start reads them over it.
                return (false, [.saveFailed(store: storeName, error: newer)])
            }
            if wrote || !pending.isEmpty {
                IntentJournal.removeCommitted(
                    pending.map(\.name), in: anchor, tookRecords: !ledgerFiles.isEmpty,
                    isCommittedByLedger: isCommittedByLedger)
            }
            state.withLock { state in
                // A reload while the write ran (it reads without the store's lock) took the record it found as
                // `saved` and merged it into memory: this pass's change goes over that, not in its place, or what the
                // reload took from other processes would read as this process's change at its next save.
                state.saved =
                    state.saved == snapshot.saved
                    ? snapshot.after : state.saved.merging(changeFrom: snapshot.base, to: snapshot.after)
                if state.deferrals == snapshot.deferrals { state.deferred = nil }
                if let owed { state.owedPurges = owed }
                if let point { state.ledgerLength = Self.later(state.ledgerLength, point) }
            }
            return (true, [])
        }
        guard let (succeeded, diagnostics) = outcome else { return nil }
        for diagnostic in diagnostics { diagnosticHandler?(diagnostic) }
        if diagnostics.contains(where: \.isFailedWrite) { retryFailedSaveLater() }
        return succeeded
    }

    /// A pass for a directory whose intents the one-write commit cannot take: folds them as every holder of the lock
    /// does, then saves this process's change (or retries its held writes) as the caller's thread would. Called with
    /// the store's lock held.
    private func commitAsEveryHolderDoes(anchor: String) -> (Bool, [PrivacyManagerDiagnostic]) {
        IntentJournal.fold(in: anchor)
        let diagnostic = state.withLock { state -> PrivacyManagerDiagnostic? in
            if state.rules.isHoldingWrites { return retryHeldRecord(&state) }
            let after = state.rules.record
            guard after != state.saved || state.deferred != nil else { return nil }
            let diagnostic = save(
                from: state.base, to: after, ledgerLength: state.ledgerLength, owed: &state.owedPurges)
            if diagnostic == nil {
                state.saved = after
                state.deferred = nil
            }
            return diagnostic
        }
        guard let diagnostic else { return (true, []) }
        if case .storeReadableAgain = diagnostic { return (true, [diagnostic]) }
        return (false, [diagnostic])
    }

    /// Waits, for at most `bound`, while this manager's flusher holds the store's lock: its pass is this process's
    /// own bounded work, so a change made right after a take-away (a grant after a refusal) waits for it, not the
    /// 100 ms bound for another process's lock, and is not held.
    func waitForFlusherToLetGo(atMost bound: Duration = .seconds(2)) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: bound)
        while state.withLock({ $0.flush.holdsLock }) && clock.now < deadline { usleep(500) }
    }

    /// Returns once every change this manager made before the call is on stable storage (flushed), or known not
    /// to be.
    ///
    /// A take-away (``disableFeatures(_:)`` and every change that only takes away) closes the gate at once and,
    /// before its call returns, is written for the operating system (a kill of the process right after loses
    /// nothing); it reaches the disk with the next flush, made off the caller's thread, which changes made meanwhile
    /// share. Call this where a power loss must not take a change back: after it returns `true`, none can. A change
    /// that gives something back was written when its call returned.
    ///
    /// - Returns: `true` when everything made before the call is flushed (also when there was nothing to flush: a
    ///   store that is not a file writes on the caller's thread); `false` when a write failed or is held (a full or
    ///   read-only disk, a store that cannot be read): the diagnostic handler was told why, and the write is
    ///   retried in the background while the process lives. Waits as long as another process holds the data
    ///   directory's lock; never blocks a thread while it waits.
    @discardableResult
    public func synchronize() async -> Bool {
        let (pending, clean, running) = state.withLock { state in
            (
                state.deferred != nil, !state.rules.isHoldingWrites && state.rules.record == state.saved,
                state.flush.isRunning
            )
        }
        // Nothing deferred and no pass under way: every change was written on its caller's thread.
        guard pending || running else { return clean }
        let ticket = requestFlush()
        return await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool? in
                if state.flush.completed >= ticket { return state.flush.lastSucceeded }
                state.flush.waiters.append((ticket, continuation))
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }
}

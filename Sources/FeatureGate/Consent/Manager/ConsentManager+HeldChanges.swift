import Foundation

extension ConsentManager {
    /// Runs `body` in one hold of the data directory's lock, waited for at most `bound`: `nil` when another process
    /// kept it that long, or when changes are already held for it (this one is held behind them without waiting).
    func underLock<Result>(
        waitingAtMost bound: Duration = AtomicFile.lockWaitBound, takesAway: Bool = false, _ body: () -> Result
    ) -> Result? {
        guard !isWaitingForLock else { return nil }
        // Taking the lock folded the intents: the durable refusals are in the ledger and the gate state now.
        return privacy.withStoreLockHeld(waitingAtMost: bound, takesAway: takesAway) {
            // (A refusal made without the lock stays held until its record is read back: the ledger may hold older
            // records of its category after what this manager last read.)
            durableRefusals = durableRefusals.filter { deferredRecords[$0] != nil }
            return body()
        }
    }

    /// Whether changes wait for a lock another process keeps (see ``setStatus(_:for:source:)``): they are recorded
    /// in the background once it is free. A process about to exit (an app extension, a command-line tool) waits
    /// until this is `false`, or loses them.
    public var isHoldingChanges: Bool { isWaitingForLock }

    /// The status `category` will have once the held changes apply: the newest held change's, else the current one.
    func intendedStatus(for category: ConsentCategory) -> ConsentStatus {
        pending.last { $0.record.category == category && $0.awaits != .nothing }?.record.newStatus
            ?? status(for: category)
    }

    /// The ledger's own status for `category` when `status` is a refusal that a pending revoke-all kept in the gate
    /// state but the ledger lacks (and no held record of the category will record it); `nil` otherwise. Finishing
    /// the revocation records it. (A refusal whose append the ledger refused stays as it is: see
    /// ``applyAnswer(_:for:source:)``.)
    func ledgerStatusOfMissingRefusal(_ category: ConsentCategory, _ status: ConsentStatus) -> ConsentStatus? {
        guard status.isRefusal, privacy.pendingRevocation != nil, refusalsMissingFromLedger.contains(category),
            !pending.contains(where: { $0.record.category == category })
        else { return nil }
        return ledgerStatusesOfMissingRefusals[category] ?? .unknown
    }

    /// Holds `record` until another process lets go of the data directory's lock: a refusal is in force at once
    /// (the consent layer withholds its features; its edge in the gate state is written with the record), a grant or
    /// unknown applies once recorded, and a record that changes no status waits only to be appended.
    func hold(_ record: ConsentRecord) -> ConsentRecordingError {
        let changesStatus = record.previousStatus != record.newStatus && record.newStatus != .expired
        var awaits: PendingRecord.Awaiting =
            !changesStatus ? .nothing : record.newStatus.isRefusal ? .refusalEdge : .change
        if awaits == .refusalEdge, recordIntent(of: record) {
            awaits = .intent
        } else {
            pending.append(PendingRecord(record: record, awaits: awaits))
        }
        if awaits == .refusalEdge || awaits == .intent {
            answers[record.category] = ConsentAnswer(record, isTrusted: true)
            updateGate()
            notify(
                ConsentChange(
                    category: record.category, previous: record.previousStatus, current: record.newStatus,
                    source: record.source, time: record.time, isRecorded: false))
        }
        if !isWaitingForLock {
            isWaitingForLock = true
            diagnosticHandler?(.changesHeld(ledger: String(describing: ledger)))
            retryHeldLater(after: 0.01)
        }
        return ConsentRecordingError(
            record: record, applied: awaits != .change, underlying: PrivacyManager.busyError, isHeld: true)
    }

    /// Makes the held refusal `record` durable without the lock, as an intent (``IntentJournal``) that the next
    /// holder of the lock, or the next start, folds into the ledger and the gate state: the record, its category
    /// refused, the features it maps decided off. The held grants of the same category before it go into the same
    /// intent, before it, so the ledger keeps the order they were made in and ends with the refusal. `false` when the
    /// ledger and the gate state are not files of one directory, or the intent could not be written: then the
    /// refusal is held in memory only.
    func recordIntent(of record: ConsentRecord) -> Bool {
        let store = privacy.store
        guard let file = store.recordFile else {
            privacy.diagnosticHandler?(
                .takeAwayNotDurable(store: String(describing: store), error: PrivacyManager.StoreKeepsNoFile()))
            return false
        }
        guard let ledger = ledger as? FileConsentLedger else { return false }
        let (ledgerLocation, stateLocation) = (FileLocation(file: ledger.url), FileLocation(file: file))
        guard ledgerLocation.anchor == stateLocation.anchor else { return false }
        let earlier = pending.filter { $0.record.category == record.category && $0.awaits == .change }.map(\.record)
        let intent = TakeAwayIntent(
            stateFile: stateLocation.components[0], ledgerFile: ledgerLocation.components[0],
            disable: privacy.catalog.mask(policy.features[record.category] ?? []), refuse: [record.category],
            records: earlier + [record])
        let (written, diagnostics) = PrivacyManager.recordIntent(
            intent, in: stateLocation.anchor, store: String(describing: store))
        for diagnostic in diagnostics { privacy.diagnosticHandler?(diagnostic) }
        guard written else { return false }
        pending.removeAll { $0.record.category == record.category && $0.awaits == .change }
        durableRefusals.insert(record.category)
        return true
    }

    /// Records the refusal `record` without the data directory's lock and without a flush: an unflushed intent
    /// (``IntentJournal``) carries the record and the refusal, the gate closes, the observers are told, and the
    /// gate's flusher appends the record to the ledger and writes the gate state off this thread
    /// (``PrivacyManager/synchronize()`` waits for it). A kill of the process once this returned keeps the refusal
    /// (the next holder of the lock, or the next start, folds the intent); a power loss before the flush leaves the
    /// category as it was or refused.
    ///
    /// `false`, changing nothing, where the refusal is recorded under the lock instead: changes wait for the lock
    /// or for an append (their order in the ledger comes first), a start's replay is owed, the checkpoint on disk
    /// disagreed with the ledger (``isCheckpointRefolded``), a revocation is pending,
    /// the ledger and the gate state are not files of one directory, or the intent could not be written.
    func deferRefusal(_ record: ConsentRecord) -> Bool {
        guard !isWaitingForLock, pending.isEmpty, owedReplay == nil, !isCheckpointRefolded,
            privacy.pendingRevocation == nil,
            let file = privacy.store.recordFile, let ledger = ledger as? FileConsentLedger
        else { return false }
        let (ledgerLocation, stateLocation) = (FileLocation(file: ledger.url), FileLocation(file: file))
        guard ledgerLocation.anchor == stateLocation.anchor, ledgerLocation.components.count == 1,
            stateLocation.components.count == 1
        else { return false }
        let previous = answers[record.category]
        answers[record.category] = ConsentAnswer(record, isTrusted: true)
        guard
            privacy.deferConsentRefusal(
                record, policy: policy, decisions: currentDecisions(), ledgerFile: ledgerLocation.components[0])
        else {
            answers[record.category] = previous
            return false
        }
        // In force over what other writers appended before it, until this manager's next hold of the lock (which
        // folds the intent first) or until the record itself is read back from the ledger.
        durableRefusals.insert(record.category)
        deferredRecords[record.category] = record
        refusalsMissingFromLedger.remove(record.category)
        notify(
            ConsentChange(
                category: record.category, previous: record.previousStatus, current: record.newStatus,
                source: record.source, time: record.time, isRecorded: true))
        return true
    }

    /// Retries the held changes once the lock is free, from a background thread that waits for it (so no caller
    /// does).
    nonisolated func retryHeldLater(after delay: Double) {
        privacy.whenStoreLockFree(after: delay) { [weak self] in
            Task { await self?.retryHeld(delay: delay) }
        }
    }

    /// Records the held changes and writes the gate state they decide, in one hold of the lock (tried, not waited
    /// for); while another process keeps it, tries again later. A ledger that refuses them otherwise ends the wait:
    /// a refusal stays applied (and is recorded before the next record), a grant is not applied.
    func retryHeld(delay: Double) {
        isWaitingForLock = false
        var replayed = 0
        let outcome = underLock(waitingAtMost: .zero) { () -> (any Error)? in
            // A start's replay of the ledger's tail that found the lock busy goes first (see `init`).
            if let end = owedReplay {
                owedReplay = nil
                replayed = Self.replayTail(
                    of: ledger, to: end, into: privacy, answers: answers, policy: policy, decisions: currentDecisions())
            }
            privacy.reloadStoredState()
            do {
                try appendPending()
                return nil
            } catch {
                return error
            }
        }
        if replayed > 0 {
            diagnosticHandler?(.gateStateBehindLedger(ledger: String(describing: ledger), records: replayed))
        }
        guard let error = outcome ?? PrivacyManager.busyError else { return }
        if AtomicFile.isLockBusy(error) {
            isWaitingForLock = true
            retryHeldLater(after: min(delay * 2, 1))
            return
        }
        var kept: [PendingRecord] = []
        for entry in pending {
            let record = entry.record
            switch entry.awaits {
            case .nothing:
                kept.append(entry)
                continue
            case .refusalEdge, .intent:
                privacy.applyConsentEdge(
                    record.category, edge: record.newStatus, policy: policy, decisions: currentDecisions())
                kept.append(PendingRecord(record: record, awaits: .nothing))
            case .change:
                // Not applied; the source's next answer counts again.
                let key = SourceAnswer(source: record.source, category: record.category)
                if lastAnswers[key] == record.newStatus { lastAnswers[key] = nil }
            }
            let failure = ConsentRecordingError(
                record: record, applied: entry.awaits == .refusalEdge, underlying: error)
            diagnosticHandler?(.heldChangeNotRecorded(failure))
        }
        pending = kept
    }

    /// Whether `read`, a record read from the ledger, is the deferred refusal `record` (the ledger keeps times to
    /// the millisecond).
    static func isSameRecord(_ read: ConsentRecord, _ record: ConsentRecord) -> Bool {
        read.category == record.category && read.previousStatus == record.previousStatus
            && read.newStatus == record.newStatus && read.source == record.source
            && read.policyVersion == record.policyVersion && abs(read.time.timeIntervalSince(record.time)) < 0.001
    }

    /// The categories whose held refusal is in force: what other writers appended before it does not change them
    /// (the refusal goes into the ledger after it).
    var heldRefusals: Set<ConsentCategory> {
        Set(pending.filter { $0.awaits == .refusalEdge }.map(\.record.category)).union(durableRefusals)
    }
}

/// A record not in the ledger yet (see `ConsentManager.pending`), and what of its change waits for it.
struct PendingRecord {
    enum Awaiting {
        /// Nothing: its change is applied (or it changes no status); it waits only to be appended.
        case nothing
        /// A held refusal, in force in memory: its edge in the gate state is written with it.
        case refusalEdge
        /// A held grant or unknown: the whole change applies once it is appended.
        case change
        /// A held refusal made durable as an intent (never kept in `pending`: the lock's next holder folds it).
        case intent
    }

    var record: ConsentRecord
    var awaits: Awaiting
}

import Foundation

extension ConsentManager {
    /// Applies what other writers of the ledger (other processes sharing the data directory, or other managers of
    /// the same ledger) appended since this manager last read it: the statuses, the gate and the observers follow,
    /// as they would for changes made here, and a relaunch would find the same.
    ///
    /// Reads only what was appended since (a ``FileConsentLedger`` reads from where this manager stopped). When the
    /// ledger no longer continues what this manager read (it was replaced, cut or rewritten, or cannot read from a
    /// point), the whole trail is folded again and taken as a relaunch would take it (refusals the gate state keeps
    /// stay), and each category whose answer differs changes. A ledger that cannot be read changes nothing; the
    /// next call tries again. Writes nothing but what the changes decide in the gate state.
    ///
    /// Call it when the ledger may have changed: from the `onLedgerChange` closure of
    /// ``PrivacyManager/watchForChangesFromOtherProcesses(in:onLedgerChange:)``, and when protected data
    /// becomes available after a launch that could not read the ledger.
    ///
    /// - Returns: The changes applied, in order, as the observers received them.
    @discardableResult
    public func catchUpWithLedger() -> [ConsentChange] {
        // The records of intents not folded yet, read before the ledger: a fold appends an intent's records before
        // it deletes the intent, so each is in one read or the other.
        let intended = Self.pendingIntentRecords(ledger: ledger, store: privacy.store)
        guard let reading = try? ledger.readTrail(after: ledgerSnapshot) else { return [] }
        ledgerSnapshot = reading.snapshot
        guard let appended = reading.appended else {
            let trail = reading.snapshot.trail
            // Folded since they were read when the trail is as new as they are.
            return reconcile(with: trail)
                + applyPendingRefusals(
                    intended.filter { !Self.isAsNew(trail, as: $0) })
        }
        return applyFromLedger(appended)
            + applyPendingRefusals(
                intended.filter { record in !appended.records.contains { Self.isSameRecord($0, record) } })
    }

    /// Whether `trail`'s answer for `record`'s category was decided no earlier than `record` (the ledger keeps times
    /// to the millisecond): the trail then holds it, or something newer.
    static func isAsNew(_ trail: ConsentTrail, as record: ConsentRecord) -> Bool {
        (trail.answers[record.category]?.decidedAt).map { $0.timeIntervalSince(record.time) > -0.001 } ?? false
    }

    /// Applies the refusals of `intended`, records other writers made without the lock (intents no holder of the
    /// lock had folded when they were read, and that the ledger as read lacks), after what the ledger holds:
    /// whatever is appended after an intent was written comes after its records. Each category's last refusal is
    /// applied once, and held as this manager holds its own (``deferRefusal(_:)``) until its record is read back
    /// from the ledger.
    func applyPendingRefusals(_ intended: [ConsentRecord]) -> [ConsentChange] {
        var changes: [ConsentChange] = []
        for (index, record) in intended.enumerated() where record.newStatus.isRefusal {
            // A category's last record only.
            guard !intended[(index + 1)...].contains(where: { $0.category == record.category }) else { continue }
            if let deferred = deferredRecords[record.category], Self.isSameRecord(record, deferred) { continue }
            durableRefusals.remove(record.category)
            changes += applyFromLedger(ConsentLedgerContents(records: [record]))
            durableRefusals.insert(record.category)
            deferredRecords[record.category] = record
        }
        return changes
    }

    /// Appends `record`. When the ledger returns what other writers appended before it since this manager last
    /// read it, applies that first; otherwise the next ``catchUpWithLedger()`` reads the trail afresh.
    func appendToLedger(_ record: ConsentRecord) throws {
        let reading = try ledger.append(record, after: ledgerSnapshot)
        if reading != nil { isCheckpointRefolded = false }
        // Under the lock: the gate state saved next, in the same critical section, reflects the ledger to the end of
        // this record, if it reflected it up to its start (else records a killed writer left unapplied come between,
        // and the point stays before them, for the next start to replay).
        if let end = reading?.snapshot.position?.offset {
            privacy.noteLedgerLength(end, ifReflecting: end - ConsentRecordLine.encode(record).count)
        }
        guard let reading, let appended = reading.appended else {
            ledgerSnapshot = ledgerSnapshot.map { ConsentLedgerSnapshot(trail: $0.trail) }
            return
        }
        ledgerSnapshot = reading.snapshot
        applyFromLedger(appended)
    }

    /// Applies entries another writer appended, one by one, as `ConsentTrail.fold(_:)` folds them.
    @discardableResult
    func applyFromLedger(_ contents: ConsentLedgerContents) -> [ConsentChange] {
        let isTrusted = (ledgerSnapshot?.trail.unreadableEntries ?? 0) == 0
        var heldRefusals = heldRefusals
        var changes: [ConsentChange] = []
        var isGateStale = false
        for record in contents.records {
            let answer = answers[record.category]
            // Unknown is no answer, except a Global Privacy Control signal going off (as ConsentTrail folds it).
            if record.newStatus != .expired && (record.newStatus != .unknown || record.source == .gpc) {
                lastAnswers[SourceAnswer(source: record.source, category: record.category)] = record.newStatus
            }
            if record.previousStatus != record.newStatus { refusalsMissingFromLedger.remove(record.category) }
            if record.source == .gpc && context.isGlobalPrivacyControlOn != (record.newStatus == .denied) {
                context.isGlobalPrivacyControlOn = record.newStatus == .denied
                isGateStale = true
            }
            guard !heldRefusals.contains(record.category) else {
                // A refusal recorded without the lock, read back: what other writers appended after it is newer.
                if let deferred = deferredRecords[record.category], Self.isSameRecord(record, deferred) {
                    deferredRecords[record.category] = nil
                    durableRefusals.remove(record.category)
                    heldRefusals = self.heldRefusals
                }
                continue
            }
            if record.newStatus == .expired {
                guard let answer, !answer.isExpiryRecorded else { continue }
                answers[record.category]?.isExpiryRecorded = true
                updateGate()
                changes.append(
                    notify(
                        ConsentChange(
                            category: record.category, previous: answer.status, current: .expired,
                            source: .appDefault, time: record.time, isRecorded: true)))
            } else if ConsentTrail.changesAnswer(record, answer) {
                let status = policy.decision(for: record.category, answer: answer, context: context, now: now()).status
                if status == record.newStatus {
                    // The status it already has: the answer's lifetime restarts; no edge, no change.
                    answers[record.category] = ConsentAnswer(record, isTrusted: isTrusted)
                    isGateStale = true
                } else {
                    changes.append(apply(record, isRecorded: true, isTrusted: isTrusted, isFromLedger: true))
                }
            }
        }
        if contents.unreadableEntries > 0 {
            answers = ConsentTrail.untrusted(answers)
            isGateStale = true
        }
        if isGateStale { updateGate() }
        return changes
    }

    /// Takes `trail`, the whole ledger folded afresh, as a relaunch would (with the refusals the gate state keeps):
    /// each category whose answer's status differs takes it as an edge; each whose status now reads differently
    /// changes.
    func reconcile(with trail: ConsentTrail) -> [ConsentChange] {
        var trail = trail
        _ = trail.mergeRefusals(privacy.storedConsentRefusals, policyVersion: policy.version)
        let before = answers
        let statusesBefore = currentDecisions().mapValues(\.status)
        // A refusal made without the lock that the trail now holds is no longer held: the trail is as new as it.
        for (category, record) in deferredRecords where Self.isAsNew(trail, as: record) {
            deferredRecords[category] = nil
            durableRefusals.remove(category)
        }
        let held = heldRefusals
        answers = trail.answers.filter { !held.contains($0.key) }.merging(before.filter { held.contains($0.key) }) {
            $1
        }
        for (source, categories) in trail.sourceAnswers {
            for (category, status) in categories {
                lastAnswers[SourceAnswer(source: source, category: category)] = status
            }
        }
        context.isGlobalPrivacyControlOn = trail.isGlobalPrivacyControlOn
        var changes: [ConsentChange] = []
        for category in Set(before.keys).union(answers.keys).sortedByName() {
            let answer = answers[category]
            let decisions = currentDecisions()
            if (before[category]?.status ?? .unknown) != (answer?.status ?? .unknown) {
                privacy.applyConsentEdge(
                    category, edge: answer?.status ?? .unknown, policy: policy, decisions: decisions,
                    isSavedElsewhere: true)
            }
            let previous = statusesBefore[category] ?? .unknown
            let current = decisions[category]?.status ?? .unknown
            guard previous != current else { continue }
            changes.append(
                notify(
                    ConsentChange(
                        category: category, previous: previous, current: current,
                        source: answer?.source ?? .appDefault, time: answer?.decidedAt ?? now(), isRecorded: true)))
        }
        updateGate()
        return changes
    }
}

import Foundation

extension ConsentManager {
    func currentDecisions() -> [ConsentCategory: ConsentDecision] {
        policy.decisions(answers: answers, context: context, now: now())
    }

    /// Hands the gate the decisions as they stand now; decides no feature.
    func updateGate() {
        privacy.setConsentDecisions(policy: policy, decisions: currentDecisions())
    }

    /// Records an `expired` entry for each answer whose lifetime ran out since it was last looked at, and updates
    /// the gate. Expiry only takes away, so it applies even when the ledger refuses the record.
    @discardableResult
    func noticeExpiries() -> [ConsentRecord] {
        let time = now()
        var records: [ConsentRecord] = []
        for (category, answer) in answers.sorted(byName: \.key.rawValue) where !answer.isExpiryRecorded {
            let decision = policy.decision(for: category, answer: answer, context: context, now: time)
            guard decision.status == .expired else { continue }
            answers[category]?.isExpiryRecorded = true
            let record = ConsentRecord(
                category: category, previousStatus: answer.status, newStatus: .expired, time: time,
                policyVersion: policy.version, source: .appDefault)
            let isRecorded: Bool
            switch underLock({ Result { try append(record) } }) {
            case .success?:
                isRecorded = true
                records.append(record)
            case .failure(let error)? where !AtomicFile.isLockBusy(error):
                isRecorded = false
            default:
                _ = hold(record)  // Another process keeps the lock: recorded once it is free.
                isRecorded = false
            }
            updateGate()
            notify(
                ConsentChange(
                    category: category, previous: answer.status, current: .expired, source: .appDefault, time: time,
                    isRecorded: isRecorded))
        }
        return records
    }

    /// Appends `record` to the ledger, after the pending records (which go first, so the ledger's order stays the
    /// order things happened). When one of those fails, `record` is not appended either.
    func append(_ record: ConsentRecord) throws {
        try appendPending()
        try appendToLedger(record)
        if record.previousStatus != record.newStatus { refusalsMissingFromLedger.remove(record.category) }
    }

    /// Appends the pending records, oldest first, each followed by what its change still waits for; stops at the
    /// first one the ledger refuses. Called under the data directory's lock, so each record and the gate state its
    /// change decides are written in one critical section.
    func appendPending() throws {
        while let first = pending.first {
            try appendToLedger(first.record)
            pending.removeFirst()
            let record = first.record
            if record.previousStatus != record.newStatus { refusalsMissingFromLedger.remove(record.category) }
            guard first.awaits != .nothing else { continue }
            let status = policy.decision(
                for: record.category, answer: answers[record.category], context: context, now: now()
            ).status
            if status == record.newStatus {
                // A held refusal, in force since it was held: its answer and its edge in the gate state.
                answers[record.category] = ConsentAnswer(record, isTrusted: true)
                privacy.applyConsentEdge(
                    record.category, edge: record.newStatus, policy: policy, decisions: currentDecisions(),
                    isCommittedByLedger: true)
            } else {
                apply(record, isRecorded: true)
            }
        }
    }

    /// Appends a record of what a source said that changes no status; when the ledger refuses it, it is kept for
    /// the next append (the answer is already remembered), and when another process keeps the lock, it is held.
    func recordRemembered(_ record: ConsentRecord) throws(ConsentRecordingError) {
        switch underLock({ Result { try append(record) } }) {
        case .success?:
            return
        case .failure(let error)? where !AtomicFile.isLockBusy(error):
            pending.append(PendingRecord(record: record, awaits: .nothing))
            throw ConsentRecordingError(record: record, applied: true, underlying: error)
        default:
            throw hold(record)
        }
    }

    /// Takes `record` as the category's answer, applies its edge to the gate and tells the observers. A record
    /// another process appended (`isFromLedger`) is not saved into the gate state again: that process saved it.
    @discardableResult
    func apply(
        _ record: ConsentRecord, isRecorded: Bool, isTrusted: Bool = true, isFromLedger: Bool = false
    ) -> ConsentChange {
        answers[record.category] = ConsentAnswer(record, isTrusted: isTrusted)
        // A record this process just appended commits its edge: the gate state's rename need not be flushed.
        privacy.applyConsentEdge(
            record.category, edge: record.newStatus, policy: policy, decisions: currentDecisions(),
            isSavedElsewhere: isFromLedger, isCommittedByLedger: isRecorded && !isFromLedger)
        return notify(
            ConsentChange(
                category: record.category,
                previous: record.previousStatus,
                current: record.newStatus,
                source: record.source,
                time: record.time,
                isRecorded: isRecorded
            ))
    }

    @discardableResult
    func notify(_ change: ConsentChange) -> ConsentChange {
        for handler in observers.withLock({ $0.handlers.map(\.handler) }) { handler.call(change) }
        return change
    }
}

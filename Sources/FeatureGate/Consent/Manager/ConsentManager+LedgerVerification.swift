import Foundation

extension ConsentManager {
    /// Waits until the checkpoint start-up read has been checked against the ledger, and what the check found is
    /// applied.
    ///
    /// Start-up trusts a ``FileConsentLedger``'s checkpoint as far as its length and last bytes say, so that a launch
    /// costs the same however long the trail. Right after, a task of utility priority reads the bytes the checkpoint
    /// covers once and compares them with the digest the checkpoint recorded; when they differ (a record rewritten
    /// in place, a corrupted byte) or it recorded none (an earlier version wrote it), the whole trail is folded from
    /// its start and its statuses replace the checkpoint's: the gate and the observers follow, as for
    /// ``catchUpWithLedger()``. The check writes nothing. Calls made meanwhile are not held up: a refusal still
    /// applies at once.
    ///
    /// - Returns: What the check found (also handed to the diagnostic handler): nothing when the checkpoint held or
    ///   start-up read every entry.
    @discardableResult
    public nonisolated func waitForLedgerVerification() async -> [ConsentDiagnostic] {
        guard let task = ledgerVerification.withLock({ $0 }) else { return [] }
        return await task.value
    }

    /// Starts the check of `checkpoint`, off the caller's thread and off this actor while the ledger is read.
    nonisolated func verifyLater(_ checkpoint: ConsentLedgerTrustedCheckpoint, of ledger: any ConsentLedger) {
        let fileSystem = FileSystem.current
        let task = Task.detached(priority: .utility) { [weak self] () -> [ConsentDiagnostic] in
            guard self != nil else { return [] }
            let check = FileSystem.$current.withValue(fileSystem) {
                Result { () throws -> ConsentLedgerCheckpointCheck in
                    if let verifying = ledger as? any ConsentLedgerVerifying {
                        return try verifying.verifyCheckpoint(checkpoint)
                    }
                    // Another ledger that handed over a file ledger's reading: folded whole, from what it loads.
                    let whole = ConsentLedgerSnapshot(trail: ConsentTrail(try ledger.load()))
                    return .refolded(ConsentLedgerReading(snapshot: whole, appended: nil), disagrees: false)
                }
            }
            return await self?.apply(check) ?? []
        }
        ledgerVerification.withLock { $0 = task }
    }

    /// Applies what the check of the checkpoint found: a whole fold, with what was appended since on top, is taken
    /// as a catch-up takes a rewritten ledger.
    func apply(_ check: Result<ConsentLedgerCheckpointCheck, any Error>) -> [ConsentDiagnostic] {
        let name = String(describing: ledger)
        var diagnostics: [ConsentDiagnostic] = []
        switch check {
        case .failure(let error):
            diagnostics.append(.ledgerCheckpointUnchecked(ledger: name, error: error))
        case .success(.holds):
            break
        case .success(.refolded(let whole, let disagrees)):
            var reading = whole
            if whole.snapshot.position != nil, let later = try? ledger.readTrail(after: whole.snapshot),
                later.appended != nil
            {
                reading = later
            }
            ledgerSnapshot = reading.snapshot
            // The checkpoint on disk is not to be built on: the next record goes in under the lock, from this fold.
            isCheckpointRefolded = true
            _ = reconcile(with: reading.snapshot.trail)  // Observers are notified inside.
            if disagrees {
                diagnostics.append(.ledgerCheckpointMismatch(ledger: name))
                let unreadable = reading.snapshot.trail.unreadableEntries
                if unreadable > 0 { diagnostics.append(.ledgerHasUnreadableEntries(ledger: name, count: unreadable)) }
            }
        }
        for diagnostic in diagnostics { diagnosticHandler?(diagnostic) }
        return diagnostics
    }
}

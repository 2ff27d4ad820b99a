import FeatureGate
import Foundation

/// What ``ConsentRevocation/revokeAll(source:erasure:)`` did.
public struct RevocationReport: Sendable, CustomStringConvertible {
    /// The consent records appended, one per category that was not already denied, in the order appended: the
    /// granted categories first, then the others, each group sorted by category.
    public var consentRecords: [ConsentRecord]
    /// The features that were enabled locally (ignoring the remote kill switch) when the call began and are now
    /// off.
    public var disabledFeatures: Feature
    /// What each subsystem purged during the call, one entry per subsystem purged, in the order of their first
    /// purge. A subsystem that was already purged cleanly and not started since is not purged again.
    ///
    /// Every purge the runtime ran from the moment the call began is here, including those it ran as soon as the
    /// revocation switched the features off, before the call waited for the runtime to settle.
    public var purges: [SubsystemPurge]
    /// The subsystems the runtime stopped during the call because their features went off, in the order stopped,
    /// including one whose start was under way when the call began: it is here once that start finished and the
    /// subsystem was stopped, or once the start failed or was cancelled (its purge is in ``purges``, a cancelled
    /// call in ``cancelled``).
    public var stoppedSubsystems: [String] = []
    /// Whether an anonymous identifier existed (cached or stored) and is now gone.
    public var identifierReset: Bool
    /// The temporary files of interrupted writes deleted from the anonymous identifier's directory, by name.
    public var removedTemporaryFiles: [String] = []
    /// What became of the erasure request.
    public var erasure: ErasureOutcome
    /// What could not be done. The rest was done regardless: a revocation never stops half-way.
    public var failures: [RevocationFailure]
    /// What was cancelled because it did not finish within the deadline (see ``ConsentRevocation/deadline``).
    public var cancelled: [CancelledOperation] = []
    /// The erasure request's idempotency key: the same for every attempt of one revocation.
    public var requestKey: UUID?
    /// Whether an erasure request is still owed: the server has not accepted it yet (see ``ErasureOutcome``). The
    /// pending revocation keeps it, and the identifier to erase, until the next
    /// ``ConsentRevocation/revokeAll(source:erasure:)`` or ``ConsentRevocation/finishPendingRevocation(source:erasure:)``
    /// sends it and the server accepts it.
    public var erasureStillOwed = false
    /// Whether this report is of a revocation a killed process began and a later start finished
    /// (``ConsentRevocation/finishPendingRevocation(source:erasure:)``).
    public var resumed = false

    /// Creates a report.
    public init(
        consentRecords: [ConsentRecord] = [],
        disabledFeatures: Feature = [],
        purges: [SubsystemPurge] = [],
        identifierReset: Bool = false,
        erasure: ErasureOutcome = .notRequested,
        failures: [RevocationFailure] = []
    ) {
        self.consentRecords = consentRecords
        self.disabledFeatures = disabledFeatures
        self.purges = purges
        self.identifierReset = identifierReset
        self.erasure = erasure
        self.failures = failures
    }

    /// Everything the subsystems purged, added up.
    public var totalPurged: PurgeReport {
        purges.reduce(into: PurgeReport()) { $0.merge($1.report) }
    }

    /// Whether every step succeeded: every denial recorded, every purge complete, the identifier deleted, and the
    /// server's copy erased or nothing there to erase.
    ///
    /// The erasure request counts when the server rejected it (``RevocationFailure/erasureRejected(statusCode:)``)
    /// and when it could name no one although requests went out
    /// (``RevocationFailure/erasureNamedNoIdentifier(requestsSent:)``): otherwise it is done
    /// (``ErasureOutcome/sent(_:)``, ``ErasureOutcome/nothingToErase``), or still owed (``erasureStillOwed``), or
    /// may legitimately not be sent (see ``ErasureOutcome``). A purge that failed counts even when a later purge of the same subsystem, in the same
    /// call, found nothing left.
    public var isComplete: Bool { failures.isEmpty && totalPurged.failures.isEmpty }

    /// A few lines: records, features, stops, purges, identifier, erasure, failures.
    public var description: String {
        var lines = [
            "consent records appended: \(consentRecords.count)",
            "features disabled: \(disabledFeatures)",
        ]
        if !stoppedSubsystems.isEmpty { lines.append("stopped: " + stoppedSubsystems.joined(separator: ", ")) }
        if purges.isEmpty {
            lines.append("purged: nothing left to purge")
        } else {
            lines += purges.map { "purged \($0.subsystem): \($0.report)" }
        }
        lines.append("anonymous identifier: \(identifierReset ? "reset" : "none stored")")
        if !removedTemporaryFiles.isEmpty {
            lines.append(
                "temporary files of interrupted writes removed: "
                    + removedTemporaryFiles.map { UntrustedText.escaped($0) }.joined(separator: ", "))
        }
        if resumed { lines.insert("finished a revocation a killed process began", at: 0) }
        lines.append("erasure request: \(erasure)")
        if erasureStillOwed { lines.append("erasure request still owed: it is sent again at the next start") }
        lines += cancelled.map { "cancelled: \($0)" }
        lines += failures.map { "failed: \($0)" }
        return lines.joined(separator: "\n")
    }
}

/// A step of revoke-all that did not succeed.
public enum RevocationFailure: Sendable, CustomStringConvertible {
    /// The ledger refused a denial. The denial was applied anyway (its features are off); it is just not in the
    /// audit trail.
    case consentNotRecorded(ConsentRecordingError)
    /// The anonymous identifier's file could not be read or deleted.
    case identifierNotReset(any Error)
    /// A temporary file of an interrupted write could not be deleted.
    case temporaryFileNotRemoved(FileStoreError)
    /// The gate's state could not record the pending revocation (or what of it is done): the revocation applies in
    /// this process, but a kill before it ends may leave it unfinished.
    case revocationNotRecorded(any Error)
    /// The subsystems had not settled when the deadline passed twice; the payload is the call cancelled last.
    /// Their purges may not have run.
    case subsystemsNotSettled(stillRunning: CancelledOperation?)
    /// No anonymous identifier was issued, so the erasure request named no one, although this many requests went
    /// out through its transport's counter in this process: the server may hold what they carried and cannot link
    /// it to this install. The request was sent all the same (it may name the user another way).
    case erasureNamedNoIdentifier(requestsSent: Int)
    /// The server refused the erasure request with this 4xx status (see ``ErasureOutcome/rejected(_:)``): the
    /// server may still hold the data. It is not retried.
    case erasureRejected(statusCode: Int)

    var isSettling: Bool {
        if case .subsystemsNotSettled = self { return true }
        return false
    }

    /// What failed.
    public var description: String {
        switch self {
        case .consentNotRecorded(let error): "\(error)"
        case .revocationNotRecorded(let error): "cannot record the revocation in the gate's state: \(error)"
        case .identifierNotReset(let error): "cannot reset the anonymous identifier: \(error)"
        case .temporaryFileNotRemoved(let error): "cannot remove a temporary file: \(error)"
        case .subsystemsNotSettled(let call):
            "the subsystems did not settle in time" + (call.map { " (cancelled \($0))" } ?? "")
        case .erasureRejected(let status): "the server rejected the erasure request with status \(status)"
        case .erasureNamedNoIdentifier(let count):
            "the erasure request named no anonymous identifier (none was issued), but \(count) request"
                + (count == 1 ? "" : "s") + " went out: the server may hold data it cannot link to this install"
        }
    }
}

import Foundation

/// Something the consent layer noticed about its ledger and worked around, failing closed.
public enum ConsentDiagnostic: Sendable, CustomStringConvertible {
    /// The ledger could not be read at start-up: every category starts as unknown.
    case ledgerUnreadable(ledger: String, error: any Error)
    /// Some ledger entries could not be decoded: grants are treated as unknown until asked again.
    case ledgerHasUnreadableEntries(ledger: String, count: Int)
    /// The gate state keeps a refusal that the ledger lacks (its append failed): the category reads as denied.
    case refusalMissingFromLedger(category: ConsentCategory)
    /// The gate state reflected the ledger only up to an earlier point (a process was killed between a change's
    /// record and its gate state): the `records` after that point were applied at start-up, as committed changes.
    case gateStateBehindLedger(ledger: String, records: Int)
    /// The checkpoint start-up read did not match the ledger, as found after start-up: the bytes it covers are not
    /// the ones it digested (a record rewritten in place, a byte corrupted), or, for a checkpoint of an earlier
    /// version, they fold to something else. The whole ledger was folded, and its result replaced the checkpoint's.
    case ledgerCheckpointMismatch(ledger: String)
    /// The ledger could not be read to check the checkpoint start-up read: what start-up read stands.
    case ledgerCheckpointUnchecked(ledger: String, error: any Error)
    /// Another process kept the data directory's lock past the bound (100 ms): consent changes are
    /// held in memory and recorded, with the gate state they decide, once it is free. A held refusal is in force
    /// meanwhile; a held grant (or unknown) applies once recorded.
    case changesHeld(ledger: String)
    /// A held change could not be recorded once the lock was free: a refusal stays applied (the gate state keeps
    /// it), a grant was not applied.
    case heldChangeNotRecorded(ConsentRecordingError)

    /// One line saying what happened and what the manager did.
    public var description: String {
        switch self {
        case .ledgerUnreadable(let ledger, let error):
            "\(ledger): cannot read the consent ledger (\(error)); every category starts as unknown"
        case .ledgerHasUnreadableEntries(let ledger, let count):
            "\(ledger): \(count) consent ledger entr\(count == 1 ? "y" : "ies") cannot be decoded; "
                + "grants read as unknown until asked again"
        case .refusalMissingFromLedger(let category):
            "the gate state records a refusal of \(category) that the consent ledger lacks; \(category) reads as denied"
        case .gateStateBehindLedger(let ledger, let records):
            "\(ledger): the gate state lacked the last \(records) consent record\(records == 1 ? "" : "s") of the "
                + "ledger (a change was cut short); they were applied as recorded"
        case .ledgerCheckpointMismatch(let ledger):
            "\(ledger): the consent ledger's checkpoint does not match the ledger; the whole ledger was folded and "
                + "its statuses applied"
        case .ledgerCheckpointUnchecked(let ledger, let error):
            "\(ledger): cannot read the consent ledger to check its checkpoint (\(error)); the statuses read at "
                + "start-up stand"
        case .changesHeld(let ledger):
            "\(ledger): another process holds the data directory's lock; consent changes are held and recorded once "
                + "it is free (refusals apply now, grants then)"
        case .heldChangeNotRecorded(let error):
            "a held consent change could not be recorded: \(error)"
        }
    }
}

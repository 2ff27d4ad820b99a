import Foundation

/// A consent change could not be recorded in the audit trail.
public struct ConsentRecordingError: Error, Sendable, CustomStringConvertible {
    /// The record that was not appended.
    public let record: ConsentRecord
    /// Whether the status change was applied anyway. Denials are (they only take features away); grants are
    /// not, because a grant without a trail cannot be proven.
    public let applied: Bool
    /// The ledger's error.
    public let underlying: any Error
    /// Whether the record is held because another process kept the data directory's lock: it is recorded once the
    /// lock is free, in order with the changes made meanwhile, and a held grant applies then
    /// (``ConsentDiagnostic/changesHeld(ledger:)``).
    public let isHeld: Bool

    init(record: ConsentRecord, applied: Bool, underlying: any Error, isHeld: Bool = false) {
        self.record = record
        self.applied = applied
        self.underlying = underlying
        self.isHeld = isHeld
    }

    /// What failed and what the manager did.
    public var description: String {
        guard !isHeld else {
            return "\(record.category) \(record.previousStatus) -> \(record.newStatus) is held until the data "
                + "directory's lock is free; " + (applied ? "applied now" : "applied once recorded")
        }
        return "cannot record \(record.category) \(record.previousStatus) -> \(record.newStatus) (\(underlying)); "
            + (applied ? "applied anyway" : "not applied")
    }
}

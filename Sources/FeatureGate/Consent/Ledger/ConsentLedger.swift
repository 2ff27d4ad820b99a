import Foundation

/// The persisted, append-only audit trail of consent changes.
///
/// A ledger keeps every ``ConsentRecord`` ever appended, in order, and exports them as JSON Lines for a
/// data-subject or compliance request. Nothing is ever removed from it, not even by revoke-all: the trail of a
/// revocation is the proof that it happened.
public protocol ConsentLedger: Sendable {
    /// Reads the trail.
    ///
    /// - Returns: The records that could be read, oldest first, and how many stored entries could not be.
    /// - Throws: When the trail exists but cannot be read at all.
    func load() throws -> ConsentLedgerContents

    /// Appends one record. Must be durable and atomic: after a crash the trail holds the record or does not,
    /// and every earlier record is intact.
    func append(_ record: ConsentRecord) throws

    /// The whole trail as JSON Lines: one JSON object per record, oldest first, each line ending in `\n`.
    ///
    /// Entries that could not be decoded are exported as they were stored, so an export never hides anything.
    func exportJSONLines() throws -> Data
}

/// A ledger that folds its trail from a point it recorded, reading only what was appended since
/// (``FileConsentLedger``, ``InMemoryConsentLedger``): what ``ConsentManager`` starts from and catches up with.
package protocol ConsentLedgerContinuing: ConsentLedger {
    /// Reads the trail folded, reading only what was appended after `snapshot` when the ledger still continues it.
    ///
    /// The trail returned must be what folding the whole trail gives (`ConsentTrail(_:)`).
    ///
    /// - Throws: When the trail exists but cannot be read.
    func readTrail(after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading

    /// Appends `record` as ``ConsentLedger/append(_:)`` does, and reads the trail up to it, continuing `snapshot`.
    ///
    /// - Returns: The trail up to and including `record`, whose `appended` holds what other writers appended after
    ///   `snapshot` and before `record` (not `record` itself); or `nil` when the ledger cannot say, though `record`
    ///   was appended.
    /// - Throws: When `record` was not appended.
    func append(_ record: ConsentRecord, after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading?
}

extension ConsentLedger {
    /// Reads the trail folded: from `snapshot` on when the ledger continues from a point, otherwise by folding the
    /// whole trail ``load()`` reads (with no `appended`).
    package func readTrail(after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading {
        // The file ledger first: a cast to a type compares its metadata, a cast to a protocol looks the conformance up
        // (4 allocations at every launch).
        if let file = self as? FileConsentLedger { return try file.readTrail(after: snapshot) }
        if let continuing = self as? any ConsentLedgerContinuing { return try continuing.readTrail(after: snapshot) }
        return ConsentLedgerReading(snapshot: ConsentLedgerSnapshot(trail: ConsentTrail(try load())), appended: nil)
    }

    /// Appends `record` and, when the ledger continues from a point, reads the trail up to it; otherwise appends with
    /// ``append(_:)`` and returns `nil`.
    package func append(_ record: ConsentRecord, after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading?
    {
        if let file = self as? FileConsentLedger { return try file.append(record, after: snapshot) }
        if let continuing = self as? any ConsentLedgerContinuing {
            return try continuing.append(record, after: snapshot)
        }
        try append(record)
        return nil
    }
}

extension FileConsentLedger: ConsentLedgerContinuing {}

extension InMemoryConsentLedger: ConsentLedgerContinuing {}

/// What a ledger read: the records it could decode, and how many entries it could not.
public struct ConsentLedgerContents: Sendable, Hashable {
    /// The decoded records, oldest first.
    public var records: [ConsentRecord]
    /// How many stored entries could not be decoded. Non-zero means the consent state derived from the trail
    /// is uncertain, and ``ConsentManager`` fails closed.
    public var unreadableEntries: Int

    /// Creates contents.
    public init(records: [ConsentRecord], unreadableEntries: Int = 0) {
        self.records = records
        self.unreadableEntries = unreadableEntries
    }
}

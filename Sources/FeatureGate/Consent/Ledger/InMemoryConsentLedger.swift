import Foundation

/// A ledger kept in memory only, for tests and for apps that keep their audit trail elsewhere.
public final class InMemoryConsentLedger: ConsentLedger, CustomStringConvertible {
    private let data: LockedValue<Data>

    /// Creates an empty ledger, or one holding `jsonLines` (for testing start-up).
    public init(jsonLines: Data = Data()) {
        data = LockedValue(jsonLines)
    }

    /// Returns the records held in memory.
    public func load() throws -> ConsentLedgerContents {
        ConsentRecordLine.contents(of: data.withLock { $0 })
    }

    /// Appends the record in memory.
    public func append(_ record: ConsentRecord) throws {
        data.withLock { $0.append(ConsentRecordLine.encode(record)) }
    }

    /// Folds the records held, only those appended after `snapshot` when it was taken of this ledger.
    package func readTrail(after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading {
        try ConsentLedgerFolding.read(ConsentLedgerMemoryBytes(data: data.withLock { $0 }), after: snapshot)
    }

    /// Appends the record in memory and folds the trail up to it, continuing `snapshot`.
    package func append(_ record: ConsentRecord, after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading?
    {
        let bytes = data.withLock { data in
            data.append(ConsentRecordLine.encode(record))
            return data
        }
        return (try? ConsentLedgerFolding.read(ConsentLedgerMemoryBytes(data: bytes), after: snapshot)).flatMap {
            ConsentLedgerFolding.withoutLast(record, of: $0)
        }
    }

    /// The trail as JSON Lines.
    public func exportJSONLines() throws -> Data {
        data.withLock { $0 }
    }

    /// `in-memory consent ledger`.
    public var description: String { "in-memory consent ledger" }
}

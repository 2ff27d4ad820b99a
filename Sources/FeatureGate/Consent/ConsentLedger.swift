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

/// The JSON Lines encoding every ledger shares: one object per line, keys sorted, times in ISO 8601 with
/// milliseconds, and a format version `"v": 1` in each line.
package enum ConsentRecordLine {
    static let version = 1

    private struct Line: Codable {
        var v: Int
        var category: ConsentCategory
        var previousStatus: ConsentStatus
        var newStatus: ConsentStatus
        var time: String
        var policyVersion: Int
        var source: ConsentSource
    }

    private static let timeStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    static func encode(_ record: ConsentRecord) -> Data {
        let line = Line(
            v: version,
            category: record.category,
            previousStatus: record.previousStatus,
            newStatus: record.newStatus,
            time: record.time.formatted(timeStyle),
            policyVersion: record.policyVersion,
            source: record.source
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of strings and integers cannot fail.
        return (try? encoder.encode(line)).map { $0 + Data("\n".utf8) } ?? Data()
    }

    package static func decode(_ line: Data) -> ConsentRecord? {
        guard let decoded = try? JSONDecoder().decode(Line.self, from: line), decoded.v == version,
            let time = try? Date(decoded.time, strategy: timeStyle)
        else { return nil }
        return ConsentRecord(
            category: decoded.category,
            previousStatus: decoded.previousStatus,
            newStatus: decoded.newStatus,
            time: time,
            policyVersion: decoded.policyVersion,
            source: decoded.source
        )
    }

    /// Splits JSON Lines into their non-empty lines.
    static func lines(of data: Data) -> [Data] {
        data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).map { Data($0) }
    }

    static func contents(of data: Data) -> ConsentLedgerContents {
        var records: [ConsentRecord] = []
        var unreadable = 0
        for line in lines(of: data) {
            // A line longer than any record is not decoded: it counts as unreadable, which fails closed.
            if line.count <= FileConsentLedger.maximumLineLength, let record = decode(line) {
                records.append(record)
            } else {
                unreadable += 1
            }
        }
        return ConsentLedgerContents(records: records, unreadableEntries: unreadable)
    }
}

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

    /// The trail as JSON Lines.
    public func exportJSONLines() throws -> Data {
        data.withLock { $0 }
    }

    /// `in-memory consent ledger`.
    public var description: String { "in-memory consent ledger" }
}

/// A ledger in one JSON Lines file, replaced atomically on every append.
///
/// Each append writes the whole trail to a temporary file, `fsync`s it and renames it over the old one, exactly
/// as ``FileFeatureStore`` does: a process killed at any moment leaves the trail with or without the new record,
/// never torn. Consent changes are rare, so rewriting the file is cheap. The file is created by the first append;
/// reading a missing file creates nothing.
///
/// The file is read only if it is a regular file of at most ``maximumFileSize`` bytes, reached without following a
/// symbolic link (a link there is an error; the next append replaces the link itself, never its target). A line
/// longer than ``maximumLineLength`` counts as an entry that cannot be decoded.
public struct FileConsentLedger: ConsentLedger, CustomStringConvertible {
    /// The most bytes the ledger may hold (about 80,000 records): a larger file is refused unread, and the consent
    /// manager fails closed.
    public static let maximumFileSize = 16 * 1024 * 1024
    /// The longest line decoded, in bytes (a record takes about 200).
    public static let maximumLineLength = 4096

    /// The JSON Lines file.
    public let url: URL

    /// Creates a ledger backed by the file at `url`. Touches nothing on disk.
    public init(url: URL) {
        self.url = url
    }

    /// Reads the file. A missing file is an empty trail.
    public func load() throws -> ConsentLedgerContents {
        ConsentRecordLine.contents(of: try AtomicFile.read(at: url, limit: Self.maximumFileSize) ?? Data())
    }

    /// Appends the record, keeping every earlier entry byte for byte, including ones it cannot decode.
    public func append(_ record: ConsentRecord) throws {
        var data = try AtomicFile.read(at: url, limit: Self.maximumFileSize) ?? Data()
        if let last = data.last, last != UInt8(ascii: "\n") { data.append(UInt8(ascii: "\n")) }
        data.append(ConsentRecordLine.encode(record))
        try AtomicFile.write(data, to: url)
    }

    /// The file's contents as JSON Lines (empty when nothing was recorded).
    public func exportJSONLines() throws -> Data {
        let data = try AtomicFile.read(at: url, limit: Self.maximumFileSize) ?? Data()
        return ConsentRecordLine.lines(of: data).reduce(into: Data()) { $0.append($1 + Data("\n".utf8)) }
    }

    /// The file's path, escaped.
    public var description: String { UntrustedText.escapedPath(url.path(percentEncoded: false)) }
}

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

    /// Reads the trail folded, reading only what was appended after `snapshot` when the ledger still continues it.
    ///
    /// What ``ConsentManager`` starts from (with `snapshot` `nil`) and catches up with. The trail returned must be
    /// what folding the whole trail gives (``ConsentTrail/init(_:)``). The default folds ``load()``: it reads the
    /// whole trail every time, and returns no ``ConsentLedgerReading/appended``.
    ///
    /// - Throws: When the trail exists but cannot be read.
    func readTrail(after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading

    /// Appends `record` as ``append(_:)`` does, and reads the trail up to it, continuing `snapshot`.
    ///
    /// - Returns: The trail up to and including `record`, whose ``ConsentLedgerReading/appended`` holds what other
    ///   writers appended after `snapshot` and before `record` (not `record` itself); or `nil` when the ledger
    ///   cannot say, though `record` was appended. The default appends with ``append(_:)`` and returns `nil`.
    /// - Throws: When `record` was not appended.
    func append(_ record: ConsentRecord, after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading?
}

extension ConsentLedger {
    /// Folds the whole trail that ``load()`` reads.
    public func readTrail(after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading {
        ConsentLedgerReading(snapshot: ConsentLedgerSnapshot(trail: ConsentTrail(try load())), appended: nil)
    }

    /// Appends `record` with ``append(_:)``; returns `nil`.
    public func append(_ record: ConsentRecord, after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading?
    {
        try append(record)
        return nil
    }
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

    /// Splits JSON Lines into their non-empty lines. A last line without its newline that an append did not finish
    /// (cut short by a crash, or still being written) is left out.
    static func lines(of data: Data) -> [Data] {
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).map { Data($0) }
        if let last = data.last, last != UInt8(ascii: "\n"), let tail = lines.last, isCutShort(tail) {
            lines.removeLast()
        }
        return lines
    }

    /// Whether `line`, a last line without its newline, is the start of a line an append did not finish: short
    /// enough to be a record, and not JSON (no proper start of a JSON object is one). Anything else is an entry,
    /// kept whether or not it decodes (a newer version's record, say).
    static func isCutShort(_ line: Data) -> Bool {
        line.count <= FileConsentLedger.maximumLineLength && (try? JSONSerialization.jsonObject(with: line)) == nil
    }

    static func contents(of data: Data) -> ConsentLedgerContents {
        var reader = Reader()
        data.withUnsafeBytes { reader.read($0) }
        return reader.finish()
    }

    /// Decodes JSON Lines fed in pieces of any size, holding at most one line of ``FileConsentLedger/maximumLineLength``
    /// bytes besides the records: a ledger of any size is read in bounded memory.
    struct Reader {
        private var records: [ConsentRecord] = []
        private var unreadable = 0
        private var line = Data()
        /// The current line is longer than any record: its bytes are dropped, and it counts as unreadable.
        private var isOverlong = false
        /// How many bytes were read, and where the current line starts.
        private var consumed = 0
        private var lineStart = 0
        /// How many of the bytes read hold the entries read: all of them, but a last line ``finish()`` ignored.
        /// Set by ``finish()``.
        private(set) var entriesLength = 0
        /// How many bytes were read.
        var bytesRead: Int { consumed }

        mutating func read(_ bytes: UnsafeRawBufferPointer) {
            var start = 0
            while start < bytes.count {
                let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n"))
                let end = newline ?? bytes.count
                if !isOverlong {
                    if line.count + end - start > FileConsentLedger.maximumLineLength {
                        isOverlong = true
                        line = Data()
                    } else {
                        line.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                    }
                }
                guard newline != nil else { break }
                endLine()
                start = end + 1
                lineStart = consumed + start
            }
            consumed += bytes.count
        }

        private mutating func endLine() {
            if isOverlong {
                // A line longer than any record is not decoded: it counts as unreadable, which fails closed.
                unreadable += 1
            } else if !line.isEmpty {
                if let record = ConsentRecordLine.decode(line) { records.append(record) } else { unreadable += 1 }
            }
            line = Data()
            isOverlong = false
        }

        /// The records read. A last line without its newline that is the start of a line is ignored (see
        /// ``ConsentRecordLine/isCutShort(_:)``).
        mutating func finish() -> ConsentLedgerContents {
            entriesLength = consumed
            if let record = ConsentRecordLine.decode(line), !isOverlong {
                records.append(record)
            } else if isOverlong || !ConsentRecordLine.isCutShort(line) {
                unreadable += 1
            } else {
                entriesLength = lineStart
            }
            return ConsentLedgerContents(records: records, unreadableEntries: unreadable)
        }
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

    /// Folds the records held, only those appended after `snapshot` when it was taken of this ledger.
    public func readTrail(after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading {
        try ConsentLedgerFolding.read(ConsentLedgerMemoryBytes(data: data.withLock { $0 }), after: snapshot)
    }

    /// Appends the record in memory and folds the trail up to it, continuing `snapshot`.
    public func append(_ record: ConsentRecord, after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading?
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

/// A ledger in one JSON Lines file, appended to, with a checkpoint beside it so that reading it does not replay it.
///
/// Each append adds one line at the end of the file (`O_APPEND`) and flushes it to the disk (`fsync`; `F_FULLFSYNC`
/// on Darwin) before it returns, holding the data directory's inter-process lock, so processes that share the file
/// (an app and its extensions) lose none of each other's records, and an append costs the same whatever the size of
/// the trail. A process killed during an append can leave the start of a line without its newline: readers ignore
/// it, and the next append removes it before adding its own. A last line without its newline that is whole JSON (or
/// longer than any record) is an entry: it is read as one and ended with a newline, never removed. Files written by
/// earlier versions, which replaced the whole file, read and append as they are. The file is created by the first
/// append; reading a missing file creates nothing.
///
/// **The checkpoint.** Under the same lock, each append also replaces ``checkpointURL`` (`NAME.checkpoint`, beside
/// the file; written like every replaced file: a temporary file, flushed, renamed) with the whole trail folded
/// (``ConsentTrail``) and the point of the file it covers: its length, its last 256 bytes, and a digest of every
/// byte before it (64-bit FNV-1a, extended with the bytes each append adds, so an append costs the same whatever the
/// size of the trail). ``readTrail(after:)`` (what ``ConsentManager`` starts from) reads the checkpoint and folds only
/// the lines after that point, so a launch costs the same with ten records or a hundred thousand. Lines another
/// writer added without updating the checkpoint (an earlier version, say) are after the point, so they are read too.
/// The checkpoint is never trusted over the file: when it is missing, unreadable, of another format, or its point is
/// not in the file as it is now (the file is shorter, or its last 256 bytes before the point differ: it was
/// replaced, cut or rewritten there), the whole file is folded, as before checkpoints existed. What that read does
/// not check (the bytes before the last 256) the digest does, after start-up: ``ConsentManager`` reads them once,
/// off the caller's thread, and when they are not what the checkpoint digested (or it has no digest: an earlier
/// version wrote it), folds the whole file and takes its result (``ConsentManager/waitForLedgerVerification()``).
/// Reading writes nothing. An append whose checkpoint cannot be written still
/// succeeds (the record is in the file); the next append writes it. The first append to a file without a
/// checkpoint folds the whole file once, under the lock.
///
/// The file is read only if it is a regular file of at most ``maximumFileSize`` bytes reached without following a
/// symbolic link (a link there is an error, also for an append); so is the checkpoint, which is ignored when it is
/// not one of at most 1 MiB. ``load()`` reads the file in pieces and holds only the decoded records;
/// ``exportJSONLines()`` returns the whole trail. A line longer than ``maximumLineLength`` counts as an entry that
/// cannot be decoded.
public struct FileConsentLedger: ConsentLedger, CustomStringConvertible {
    /// The most bytes a read accepts (about 1.3 million records): a larger file is refused unread, and the consent
    /// manager fails closed. It never stops an append. Reading holds only the decoded records, never the file.
    public static let maximumFileSize = 256 * 1024 * 1024
    /// The longest line decoded, in bytes (a record takes about 200).
    public static let maximumLineLength = 4096
    /// What the checkpoint's name adds to the ledger's: `consent-ledger.jsonl.checkpoint`.
    public static let checkpointSuffix = ".checkpoint"

    /// The JSON Lines file.
    public let url: URL

    /// Creates a ledger backed by the file at `url`. Touches nothing on disk.
    public init(url: URL) {
        self.url = url
    }

    /// The checkpoint beside the file: its name with ``checkpointSuffix``.
    public var checkpointURL: URL {
        url.deletingLastPathComponent().appending(path: checkpointName, directoryHint: .notDirectory)
    }

    private var checkpointName: String {
        (FileLocation(file: url).components.last ?? "") + Self.checkpointSuffix
    }

    /// Reads the file in pieces. A missing file is an empty trail.
    public func load() throws -> ConsentLedgerContents {
        var reader = ConsentRecordLine.Reader()
        _ = try AtomicFile.readChunks(FileLocation(file: url), limit: Self.maximumFileSize) { reader.read($0) }
        return reader.finish()
    }

    /// Reads the trail folded: the lines after `snapshot` when the file still continues it; otherwise the lines
    /// after the checkpoint's point on top of the checkpoint when the file continues that; otherwise the whole file.
    /// Writes nothing.
    public func readTrail(after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading {
        let checkpoint = FileLocation(file: checkpointURL)
        return try AtomicFile.withOpenedFile(FileLocation(file: url), limit: Self.maximumFileSize) {
            (file) throws(FileStoreError) -> ConsentLedgerReading in
            guard let file else {
                return try ConsentLedgerFolding.read(ConsentLedgerMemoryBytes(data: Data()), after: snapshot)
            }
            return try ConsentLedgerFolding.read(file, after: snapshot) {
                (try? AtomicFile.read(checkpoint, limit: ConsentLedgerCheckpoint.maximumSize))
                    .flatMap { $0 }.flatMap(ConsentLedgerCheckpoint.decode)
            }
        }
    }

    /// Appends the record as one line and flushes it, keeping every earlier entry byte for byte, including ones it
    /// cannot decode (see the repair of a cut-short last line above), then replaces the checkpoint.
    public func append(_ record: ConsentRecord) throws {
        _ = try append(record, after: nil)
    }

    /// Appends the record as ``append(_:)`` does, and returns the trail up to it, folded from `snapshot` when the
    /// file continues it (else from the checkpoint, else from the start).
    public func append(_ record: ConsentRecord, after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading?
    {
        let checkpointName = checkpointName
        var reading: ConsentLedgerReading?
        try AtomicFile.appendLine(
            ConsentRecordLine.encode(record), to: FileLocation(file: url),
            maximumLineLength: Self.maximumLineLength, isCutShort: ConsentRecordLine.isCutShort
        ) { appended in
            guard appended.file.size <= Self.maximumFileSize,
                let read = try? ConsentLedgerFolding.read(
                    appended.file, after: snapshot,
                    checkpoint: {
                        appended.readSibling(checkpointName, limit: ConsentLedgerCheckpoint.maximumSize)
                            .flatMap(ConsentLedgerCheckpoint.decode)
                    })
            else { return }
            if let data = ConsentLedgerCheckpoint.encode(read.snapshot) {
                // Best effort: a checkpoint not written leaves the old one, whose point is still in the file.
                try? appended.replaceSibling(checkpointName, with: data, durability: .ordered)
            }
            reading = ConsentLedgerFolding.withoutLast(record, of: read)
        }
        return reading
    }

    /// The file's contents as JSON Lines (empty when nothing was recorded).
    public func exportJSONLines() throws -> Data {
        var data = Data()
        _ = try AtomicFile.readChunks(FileLocation(file: url), limit: Self.maximumFileSize) {
            data.append(contentsOf: $0)
        }
        return ConsentRecordLine.lines(of: data).reduce(into: Data()) { $0.append($1 + Data("\n".utf8)) }
    }

    /// The file's path, escaped.
    public var description: String { UntrustedText.escapedPath(url.path(percentEncoded: false)) }
}

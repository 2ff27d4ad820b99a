import Foundation

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
/// the file; a temporary file renamed over it, never flushed: it is a cache, and a power loss that leaves it missing,
/// empty, cut short or zeroed costs one full fold) with the whole trail folded
/// (`ConsentTrail`) and the point of the file it covers: its length, its last 256 bytes, and a digest of every
/// byte before it (64-bit FNV-1a, extended with the bytes each append adds, so an append costs the same whatever the
/// size of the trail). `readTrail(after:)` (what ``ConsentManager`` starts from) reads the checkpoint and folds only
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
        self.location = FileLocation(file: url)
        IntentJournal.register(.ledger, at: location)
    }

    /// ``url`` as the file layer reaches it, worked out once.
    package let location: FileLocation

    /// The checkpoint beside the file: its name with ``checkpointSuffix``.
    public var checkpointURL: URL {
        url.deletingLastPathComponent().appending(path: checkpointName, directoryHint: .notDirectory)
    }

    private var checkpointName: String {
        (location.components.last ?? "") + Self.checkpointSuffix
    }

    /// Reads the file in pieces. A missing file is an empty trail.
    public func load() throws -> ConsentLedgerContents {
        var reader = ConsentRecordLine.Reader()
        _ = try AtomicFile.readChunks(location, limit: Self.maximumFileSize) { reader.read($0) }
        return reader.finish()
    }

    /// Reads the trail folded: the lines after `snapshot` when the file still continues it; otherwise the lines
    /// after the checkpoint's point on top of the checkpoint when the file continues that; otherwise the whole file.
    /// Writes nothing.
    package func readTrail(after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading {
        // The checkpoint's location from the ledger's, without building its URL (a launch reads it).
        let checkpoint = FileLocation(anchor: location.anchor, components: [checkpointName])
        return try AtomicFile.withOpenedFile(location, limit: Self.maximumFileSize) {
            (file) throws(FileStoreError) -> ConsentLedgerReading in
            guard let file else {
                return try ConsentLedgerFolding.read(ConsentLedgerMemoryBytes(data: Data()), after: snapshot)
            }
            return try ConsentLedgerFolding.read(file, after: snapshot, checkpoint: .file(checkpoint))
        }
    }

    /// Appends the record as one line and flushes it, keeping every earlier entry byte for byte, including ones it
    /// cannot decode (see the repair of a cut-short last line above), then replaces the checkpoint.
    public func append(_ record: ConsentRecord) throws {
        _ = try append(record, after: nil)
    }

    /// Appends `records`, oldest first, as ``append(_:)`` appends one, in one write and one flush, then replaces the
    /// checkpoint once: what a fold of many pending changes appends. A crash part-way leaves whole lines of the
    /// first ones (the cut-short last line is repaired by the next append).
    ///
    /// - Returns: Where their lines went (the file's length after them, back by their bytes), when the file could be
    ///   read back (`nil` also when `records` is empty).
    @discardableResult
    package func append(contentsOf records: [ConsentRecord]) throws -> Range<Int>? {
        guard !records.isEmpty else { return nil }
        let lines = records.reduce(into: Data()) { $0.append(ConsentRecordLine.encode($1)) }
        guard let end = try appendLines(lines, after: nil)?.snapshot.position?.offset else { return nil }
        return (end - lines.count)..<end
    }

    /// Appends the record as ``append(_:)`` does, and returns the trail up to it, folded from `snapshot` when the
    /// file continues it (else from the checkpoint, else from the start).
    package func append(_ record: ConsentRecord, after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading?
    {
        guard let read = try appendLines(ConsentRecordLine.encode(record), after: snapshot) else { return nil }
        return ConsentLedgerFolding.withoutLast(record, of: read)
    }

    /// Appends `lines` (whole lines) in one write and one flush, then replaces the checkpoint; returns the trail
    /// with them, folded from `snapshot` when the file continues it (else from the checkpoint, else from the start).
    private func appendLines(_ lines: Data, after snapshot: ConsentLedgerSnapshot?) throws -> ConsentLedgerReading? {
        let checkpointName = checkpointName
        var reading: ConsentLedgerReading?
        try AtomicFile.appendLine(
            lines, to: FileLocation(file: url), maximumLineLength: Self.maximumLineLength,
            isCutShort: ConsentRecordLine.isCutShort
        ) { appended in
            guard appended.file.size <= Self.maximumFileSize,
                let read = try? ConsentLedgerFolding.read(
                    appended.file, after: snapshot, checkpoint: .sibling(checkpointName, of: appended))
            else { return }
            if let data = ConsentLedgerCheckpoint.encode(read.snapshot) {
                // Best effort, and never flushed: a cache checked against the file before it is used, so a checkpoint
                // not written, or one a power loss left old, missing, empty, cut short or zeroed, costs one full fold.
                try? appended.replaceSibling(checkpointName, with: data, durability: .unflushed)
            }
            reading = read
        }
        return reading
    }

    /// The file's contents as JSON Lines (empty when nothing was recorded).
    public func exportJSONLines() throws -> Data {
        var data = Data()
        _ = try AtomicFile.readChunks(location, limit: Self.maximumFileSize) {
            data.append(contentsOf: $0)
        }
        return ConsentRecordLine.lines(of: data).reduce(into: Data()) { $0.append($1 + Data("\n".utf8)) }
    }

    /// The file's path, escaped.
    public var description: String { UntrustedText.escapedPath(url.path(percentEncoded: false)) }
}

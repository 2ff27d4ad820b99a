import Foundation

/// A ledger's trail folded up to some point, and where that point is: what a reader keeps so that its next read
/// reads only what was appended since.
///
/// Only a ledger makes snapshots that it can continue from (``FileConsentLedger`` and ``InMemoryConsentLedger`` do);
/// one made with ``init(trail:)`` has no point, so the next read folds the whole trail again.
public struct ConsentLedgerSnapshot: Sendable, Hashable {
    /// Every entry up to the point, folded.
    public let trail: ConsentTrail
    /// Where the point is, for the ledger that made the snapshot.
    package let position: ConsentLedgerPosition?

    /// A snapshot no ledger continues from: a read after it folds the whole trail.
    public init(trail: ConsentTrail) {
        self.init(trail: trail, position: nil)
    }

    package init(trail: ConsentTrail, position: ConsentLedgerPosition?) {
        self.trail = trail
        self.position = position
    }
}

/// What a ledger read: its whole trail folded, and the entries appended after the snapshot it was given.
public struct ConsentLedgerReading: Sendable, Hashable {
    /// The whole trail folded, and where the read ended: the snapshot to give the next read.
    public var snapshot: ConsentLedgerSnapshot
    /// The entries appended after the snapshot given, oldest first. `nil` when the trail was folded from its start
    /// instead (no snapshot, or one the ledger no longer continues: the ledger was replaced, cut or rewritten since,
    /// or cannot read from a point).
    public var appended: ConsentLedgerContents?
    /// The checkpoint the read folded on top of without reading the bytes it covers, if it did: what
    /// ``ConsentManager`` has checked after start-up (``ConsentLedgerVerifying``).
    package var trustedCheckpoint: ConsentLedgerTrustedCheckpoint?

    /// Creates a reading.
    public init(snapshot: ConsentLedgerSnapshot, appended: ConsentLedgerContents?) {
        self.snapshot = snapshot
        self.appended = appended
    }
}

/// A point in a ledger's JSON Lines: how many bytes were read, and the last bytes before the point, so that a ledger
/// rewritten since (shortened, replaced, or changed near the point) is noticed at once and read from its start
/// instead; and the digest of every byte before the point, which only a pass over them checks (after start-up).
package struct ConsentLedgerPosition: Sendable, Hashable {
    /// How many bytes of the ledger the point follows. Always the end of an entry.
    package let offset: Int
    /// The `min(offset, fingerprintLength)` bytes before `offset`.
    package let fingerprint: Data
    /// The digest of the `offset` bytes before the point, or `nil` when it is not known (a checkpoint written by an
    /// earlier version, and every point read on top of one).
    package let digest: ConsentLedgerDigest?

    /// About one whole record, with the newline before it: its time (to the millisecond), category and statuses.
    package static let fingerprintLength = 256

    package init(offset: Int, fingerprint: Data, digest: ConsentLedgerDigest?) {
        self.offset = offset
        self.fingerprint = fingerprint
        self.digest = digest
    }
}

/// The bytes of a ledger in JSON Lines, wherever they are kept.
protocol ConsentLedgerBytes {
    /// How many bytes there are (for a file: when it was opened).
    var count: Int { get }
    /// The bytes in `range` (fewer when they end first).
    func slice(_ range: Range<Int>) throws(FileStoreError) -> Data
    /// Hands the bytes from `offset` to the end to `body`, in pieces.
    func stream(from offset: Int, _ body: (UnsafeRawBufferPointer) -> Void) throws(FileStoreError)
}

extension AtomicFile.OpenedFile: ConsentLedgerBytes {
    var count: Int { size }

    func slice(_ range: Range<Int>) throws(FileStoreError) -> Data { try read(range) }

    func stream(from offset: Int, _ body: (UnsafeRawBufferPointer) -> Void) throws(FileStoreError) {
        try readChunks(from: offset, chunkSize: 64 * 1024, body)
    }
}

/// A ledger's bytes in memory.
struct ConsentLedgerMemoryBytes: ConsentLedgerBytes {
    let data: Data

    var count: Int { data.count }

    func slice(_ range: Range<Int>) throws(FileStoreError) -> Data {
        let range = range.clamped(to: 0..<data.count)
        return Data(data[(data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)])
    }

    func stream(from offset: Int, _ body: (UnsafeRawBufferPointer) -> Void) throws(FileStoreError) {
        guard offset < data.count else { return }
        data[(data.startIndex + offset)...].withUnsafeBytes { body($0) }
    }
}

/// Reading a ledger from a snapshot or a checkpoint instead of from its start.
enum ConsentLedgerFolding {
    /// Whether `position` is still a point of `bytes`: within them, with the same bytes before it. Anything else
    /// (a fingerprint of the wrong length, bytes that cannot be read) is no.
    static func continues(_ position: ConsentLedgerPosition, in bytes: some ConsentLedgerBytes) -> Bool {
        let length = position.fingerprint.count
        guard position.offset >= 0, position.offset <= bytes.count,
            length == min(position.offset, ConsentLedgerPosition.fingerprintLength)
        else { return false }
        return (try? bytes.slice((position.offset - length)..<position.offset)) == position.fingerprint
    }

    /// The point after the first `offset` bytes, whose digest is `digest`.
    static func position(
        at offset: Int, in bytes: some ConsentLedgerBytes, digest: ConsentLedgerDigest?
    ) throws(FileStoreError)
        -> ConsentLedgerPosition
    {
        let start = max(0, offset - ConsentLedgerPosition.fingerprintLength)
        return ConsentLedgerPosition(offset: offset, fingerprint: try bytes.slice(start..<offset), digest: digest)
    }

    /// Reads `bytes` after `snapshot` when they still continue it; otherwise after the snapshot `checkpoint` gives
    /// (asked only then) when they continue that, with the trail folded afresh (``ConsentLedgerReading/appended`` is
    /// `nil`); otherwise from the start. Never trusts a snapshot the bytes do not continue. The digest of the point
    /// read to extends the base's with the bytes read after it (when the base has none, neither has the point).
    static func read(
        _ bytes: some ConsentLedgerBytes,
        after snapshot: ConsentLedgerSnapshot?,
        checkpoint: () -> ConsentLedgerSnapshot? = { nil }
    ) throws(FileStoreError) -> ConsentLedgerReading {
        let empty = ConsentLedgerSnapshot(trail: ConsentTrail(ConsentLedgerContents(records: [])))
        var base = empty
        var continuesSnapshot = false
        var trusted: ConsentLedgerTrustedCheckpoint?
        if let snapshot, let position = snapshot.position, continues(position, in: bytes) {
            base = snapshot
            continuesSnapshot = true
        } else if let checkpoint = checkpoint(), let position = checkpoint.position, continues(position, in: bytes) {
            base = checkpoint
            trusted = ConsentLedgerTrustedCheckpoint(trail: checkpoint.trail, position: position)
        }
        let offset = base.position?.offset ?? 0
        var reader = ConsentRecordLine.Reader()
        // Two digests: of every byte read (`running`), and of the bytes up to the last newline read (`ended`), which
        // is the digest of the entries when the reader leaves out a last line an append did not finish.
        var running = base.position == nil ? ConsentLedgerDigest() : base.position?.digest
        var ended = running
        try bytes.stream(from: offset) { piece in
            reader.read(piece)
            guard running != nil else { return }
            if let newline = piece.lastIndex(of: UInt8(ascii: "\n")) {
                running?.add(UnsafeRawBufferPointer(rebasing: piece[0...newline]))
                ended = running
                running?.add(UnsafeRawBufferPointer(rebasing: piece[(newline + 1)...]))
            } else {
                running?.add(piece)
            }
        }
        let contents = reader.finish()
        var trail = base.trail
        trail.fold(contents)
        let consumed = reader.entriesLength
        let end = try position(at: offset + consumed, in: bytes, digest: consumed == reader.bytesRead ? running : ended)
        var reading = ConsentLedgerReading(
            snapshot: ConsentLedgerSnapshot(trail: trail, position: end),
            appended: continuesSnapshot ? contents : nil)
        reading.trustedCheckpoint = trusted
        return reading
    }

    /// `reading` of a ledger that ends with `record`, just appended, as an append returns it: `appended` without
    /// `record`. `nil` when the last entry read is not `record` (the ledger did not end with it).
    static func withoutLast(_ record: ConsentRecord, of reading: ConsentLedgerReading) -> ConsentLedgerReading? {
        guard var appended = reading.appended else { return reading }
        guard let written = ConsentRecordLine.decode(ConsentRecordLine.encode(record)),
            appended.records.last == written
        else { return nil }
        appended.records.removeLast()
        var reading = reading
        reading.appended = appended
        return reading
    }
}

/// The checkpoint a ``FileConsentLedger`` keeps beside its file: the trail folded up to a point of the file, so that
/// start-up reads only what follows the point.
///
/// A JSON object: `v` (the format, 1), `ledgerLength` and `fingerprint` (the point, see ``ConsentLedgerPosition``;
/// the fingerprint in Base64), `digest` (of the `ledgerLength` bytes before the point, see ``ConsentLedgerDigest``;
/// absent from checkpoints of earlier versions, which read as before and are checked by a whole fold instead),
/// `unreadableEntries`, `globalPrivacyControl`, `answers` (per category: status,
/// `decidedAt` as seconds since 2001 so that it reads back exactly, source, policy version, whether trusted and
/// whether an expiry was recorded) and `sourceAnswers`. Anything else (another version, a value out of range, a
/// source or status this version does not know) is no checkpoint at all: the ledger is folded from its start.
enum ConsentLedgerCheckpoint {
    static let version = 1
    /// The most bytes a checkpoint read accepts; a larger one is not written.
    static let maximumSize = 1024 * 1024

    private struct Stored: Codable {
        var v: Int
        var ledgerLength: Int
        var fingerprint: Data
        var digest: String?
        var unreadableEntries: Int
        var globalPrivacyControl: Bool
        var answers: [Answer]
        var sourceAnswers: [SourceAnswer]
    }

    private struct Answer: Codable {
        var category: ConsentCategory
        var status: ConsentStatus
        var decidedAt: Double?
        var source: ConsentSource?
        var policyVersion: Int
        var trusted: Bool
        var expiryRecorded: Bool
    }

    private struct SourceAnswer: Codable {
        var source: ConsentSource
        var category: ConsentCategory
        var status: ConsentStatus
    }

    static func encode(_ snapshot: ConsentLedgerSnapshot) -> Data? {
        guard let position = snapshot.position else { return nil }
        let trail = snapshot.trail
        let stored = Stored(
            v: version, ledgerLength: position.offset, fingerprint: position.fingerprint,
            digest: position.digest?.encoded,
            unreadableEntries: trail.unreadableEntries, globalPrivacyControl: trail.isGlobalPrivacyControlOn,
            answers: trail.answers.sorted { $0.key < $1.key }.map { category, answer in
                Answer(
                    category: category, status: answer.status,
                    decidedAt: answer.decidedAt?.timeIntervalSinceReferenceDate, source: answer.source,
                    policyVersion: answer.policyVersion, trusted: answer.isTrusted,
                    expiryRecorded: answer.isExpiryRecorded)
            },
            sourceAnswers: trail.sourceAnswers.sorted { $0.key.rawValue < $1.key.rawValue }.flatMap { source, answers in
                answers.sorted { $0.key < $1.key }.map {
                    SourceAnswer(source: source, category: $0.key, status: $0.value)
                }
            })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(stored), data.count <= maximumSize else { return nil }
        return data
    }

    static func decode(_ data: Data) -> ConsentLedgerSnapshot? {
        guard let stored = try? JSONDecoder().decode(Stored.self, from: data), stored.v == version,
            stored.ledgerLength >= 0, stored.unreadableEntries >= 0,
            stored.fingerprint.count == min(stored.ledgerLength, ConsentLedgerPosition.fingerprintLength)
        else { return nil }
        var answers: [ConsentCategory: ConsentAnswer] = [:]
        for answer in stored.answers {
            guard answer.status != .expired, answers[answer.category] == nil, answer.decidedAt?.isFinite ?? true
            else { return nil }
            answers[answer.category] = ConsentAnswer(
                status: answer.status, decidedAt: answer.decidedAt.map { Date(timeIntervalSinceReferenceDate: $0) },
                source: answer.source, policyVersion: answer.policyVersion, isTrusted: answer.trusted,
                isExpiryRecorded: answer.expiryRecorded)
        }
        var sourceAnswers: [ConsentSource: [ConsentCategory: ConsentStatus]] = [:]
        for answer in stored.sourceAnswers {
            guard answer.status != .expired, sourceAnswers[answer.source]?[answer.category] == nil else { return nil }
            sourceAnswers[answer.source, default: [:]][answer.category] = answer.status
        }
        let trail = ConsentTrail(
            answers: answers, sourceAnswers: sourceAnswers, isGlobalPrivacyControlOn: stored.globalPrivacyControl,
            unreadableEntries: stored.unreadableEntries)
        return ConsentLedgerSnapshot(
            trail: trail,
            position: ConsentLedgerPosition(
                offset: stored.ledgerLength, fingerprint: stored.fingerprint,
                digest: stored.digest.flatMap(ConsentLedgerDigest.init(encoded:))))
    }
}

import Foundation

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
        checkpoint: ConsentLedgerCheckpoint.Source = .none
    ) throws(FileStoreError) -> ConsentLedgerReading {
        let empty = ConsentLedgerSnapshot(trail: ConsentTrail(ConsentLedgerContents(records: [])))
        var base = empty
        var continuesSnapshot = false
        var trusted: ConsentLedgerTrustedCheckpoint?
        if let snapshot, let position = snapshot.position, continues(position, in: bytes) {
            base = snapshot
            continuesSnapshot = true
        } else if let checkpoint = checkpoint.snapshot(), let position = checkpoint.position,
            continues(position, in: bytes)
        {
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

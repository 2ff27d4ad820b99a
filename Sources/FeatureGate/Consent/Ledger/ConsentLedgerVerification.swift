import Foundation

/// A digest of a ledger's bytes from its start: 64-bit FNV-1a, extended byte by byte, so that an append extends the
/// digest its checkpoint holds with the bytes it adds, whatever the size of the trail.
///
/// It guards against bytes changed by accident or by a tool (a record rewritten in place with the same length, a byte
/// corrupted), not against someone who rewrites the checkpoint as well: anyone who can write one can write the other.
/// Every step of FNV-1a is a bijection of the state, so two inputs of one length that differ in one byte always
/// digest differently.
package struct ConsentLedgerDigest: Sendable, Equatable {
    package private(set) var value: UInt64

    /// How a digest is written in the checkpoint: `fnv1a64:` and 16 lowercase hexadecimal digits.
    static let prefix = "fnv1a64:"

    /// The digest of no bytes.
    package init() {
        value = 0xcbf2_9ce4_8422_2325
    }

    package init(value: UInt64) {
        self.value = value
    }

    /// Extends the digest with `bytes`.
    package mutating func add(_ bytes: UnsafeRawBufferPointer) {
        var hash = value
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        value = hash
    }

    /// `fnv1a64:` and the value in hexadecimal.
    var encoded: String {
        let digits = String(value, radix: 16)
        return Self.prefix + String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The digest `text` encodes, or `nil` (another algorithm, or not one).
    init?(encoded text: String) {
        guard text.hasPrefix(Self.prefix) else { return nil }
        let digits = text.dropFirst(Self.prefix.count)
        guard digits.count == 16, let value = UInt64(digits, radix: 16) else { return nil }
        self.value = value
    }
}

/// A checkpoint a read folded on top of without reading the bytes it covers: what
/// ``ConsentLedgerVerifying/verifyCheckpoint(_:)`` checks after start-up.
package struct ConsentLedgerTrustedCheckpoint: Sendable, Equatable {
    /// The trail as the checkpoint holds it.
    package let trail: ConsentTrail
    /// The point of the ledger it covers, with the digest of the bytes before it when it recorded one.
    package let position: ConsentLedgerPosition
}

/// What checking a trusted checkpoint found.
package enum ConsentLedgerCheckpointCheck: Sendable {
    /// The bytes the checkpoint covers are the ones it digested: what it holds is what folding them gives.
    case holds
    /// The checkpoint could not be checked (it recorded no digest, or the ledger no longer continues its point) or
    /// did not hold: the whole ledger folded from its start, every entry read. `disagrees`: the bytes it covers are
    /// not the ones it digested, or (without a digest) do not fold to what it holds.
    case refolded(ConsentLedgerReading, disagrees: Bool)
}

/// A ledger that keeps a checkpoint and can check one a read trusted (``FileConsentLedger``).
package protocol ConsentLedgerVerifying: ConsentLedger {
    /// Reads the bytes `checkpoint` covers once, and says whether they are the ones it digested; when they are not
    /// (or it recorded no digest), folds the whole ledger from its start. Writes nothing.
    ///
    /// - Throws: When the ledger cannot be read.
    func verifyCheckpoint(_ checkpoint: ConsentLedgerTrustedCheckpoint) throws -> ConsentLedgerCheckpointCheck
}

/// The first `count` bytes of a ledger.
struct ConsentLedgerPrefix<Base: ConsentLedgerBytes>: ConsentLedgerBytes {
    let base: Base
    let limit: Int

    var count: Int { min(base.count, limit) }

    func slice(_ range: Range<Int>) throws(FileStoreError) -> Data {
        try base.slice(range.clamped(to: 0..<max(0, limit)))
    }

    func stream(from offset: Int, _ body: (UnsafeRawBufferPointer) -> Void) throws(FileStoreError) {
        var position = offset
        try base.stream(from: offset) { bytes in
            let wanted = max(0, min(bytes.count, limit - position))
            position += bytes.count
            if wanted > 0 { body(UnsafeRawBufferPointer(rebasing: bytes[0..<wanted])) }
        }
    }
}

extension ConsentLedgerFolding {
    /// Checks `checkpoint` against `bytes`: digests the bytes it covers (a pass that decodes nothing) and compares.
    /// When it recorded no digest, the bytes are not there any more, or they differ, folds the whole ledger: the
    /// covered bytes first (to tell whether they fold to what the checkpoint holds), then the rest on top.
    static func verify(
        _ checkpoint: ConsentLedgerTrustedCheckpoint, in bytes: some ConsentLedgerBytes
    ) throws(FileStoreError) -> ConsentLedgerCheckpointCheck {
        let position = checkpoint.position
        guard continues(position, in: bytes) else {
            // Changed since it was read (cut, replaced, rewritten near its point): folded afresh, as a catch-up does.
            return .refolded(try read(bytes, after: nil), disagrees: false)
        }
        let covered = ConsentLedgerPrefix(base: bytes, limit: position.offset)
        if let recorded = position.digest {
            var digest = ConsentLedgerDigest()
            try covered.stream(from: 0) { digest.add($0) }
            if digest == recorded { return .holds }
        }
        let upToPoint = try read(covered, after: nil)
        let whole = try read(bytes, after: upToPoint.snapshot)
        let disagrees =
            position.digest != nil || upToPoint.snapshot.trail != checkpoint.trail
            || upToPoint.snapshot.position?.offset != position.offset
        let reading = ConsentLedgerReading(snapshot: whole.snapshot, appended: nil)
        return .refolded(reading, disagrees: disagrees)
    }
}

extension FileConsentLedger: ConsentLedgerVerifying {
    /// Reads the file once from its start (in pieces, never whole) to check what start-up took from the checkpoint.
    package func verifyCheckpoint(_ checkpoint: ConsentLedgerTrustedCheckpoint) throws -> ConsentLedgerCheckpointCheck {
        try AtomicFile.withOpenedFile(location, limit: Self.maximumFileSize) {
            (file) throws(FileStoreError) -> ConsentLedgerCheckpointCheck in
            guard let file else {
                // The file is gone since start-up: an empty trail, as a catch-up would read it.
                return .refolded(
                    try ConsentLedgerFolding.read(ConsentLedgerMemoryBytes(data: Data()), after: nil), disagrees: false)
            }
            return try ConsentLedgerFolding.verify(checkpoint, in: file)
        }
    }
}

import Foundation

/// A ledger's trail folded up to some point, and where that point is: what a reader keeps so that its next read
/// reads only what was appended since.
///
/// Only a ledger makes snapshots that it can continue from (``FileConsentLedger`` and ``InMemoryConsentLedger`` do);
/// one made with ``init(trail:)`` has no point, so the next read folds the whole trail again.
package struct ConsentLedgerSnapshot: Sendable, Equatable {
    /// Every entry up to the point, folded.
    package let trail: ConsentTrail
    /// Where the point is, for the ledger that made the snapshot.
    package let position: ConsentLedgerPosition?

    /// A snapshot no ledger continues from: a read after it folds the whole trail.
    package init(trail: ConsentTrail) {
        self.init(trail: trail, position: nil)
    }

    package init(trail: ConsentTrail, position: ConsentLedgerPosition?) {
        self.trail = trail
        self.position = position
    }
}

/// What a ledger read: its whole trail folded, and the entries appended after the snapshot it was given.
package struct ConsentLedgerReading: Sendable, Equatable {
    /// The whole trail folded, and where the read ended: the snapshot to give the next read.
    package var snapshot: ConsentLedgerSnapshot
    /// The entries appended after the snapshot given, oldest first. `nil` when the trail was folded from its start
    /// instead (no snapshot, or one the ledger no longer continues: the ledger was replaced, cut or rewritten since,
    /// or cannot read from a point).
    package var appended: ConsentLedgerContents?
    /// The checkpoint the read folded on top of without reading the bytes it covers, if it did: what
    /// ``ConsentManager`` has checked after start-up (``ConsentLedgerVerifying``).
    package var trustedCheckpoint: ConsentLedgerTrustedCheckpoint?

    /// Creates a reading.
    package init(snapshot: ConsentLedgerSnapshot, appended: ConsentLedgerContents?) {
        self.snapshot = snapshot
        self.appended = appended
    }
}

/// A point in a ledger's JSON Lines: how many bytes were read, and the last bytes before the point, so that a ledger
/// rewritten since (shortened, replaced, or changed near the point) is noticed at once and read from its start
/// instead; and the digest of every byte before the point, which only a pass over them checks (after start-up).
package struct ConsentLedgerPosition: Sendable, Equatable {
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

import Foundation

extension AtomicFile {
    /// How far a write must reach before it returns.
    ///
    /// On Linux every flush is `fsync`. On Darwin `fsync` leaves the data in the drive's volatile cache: `full`
    /// (`F_FULLFSYNC`, milliseconds) writes it through, for what must survive a power loss, a refusal or a
    /// revocation above all; `ordered` (`F_BARRIERFSYNC`) only orders it before later writes, so a crash leaves
    /// the old or the new contents, for a write whose loss fails closed (an enable) or costs nothing; `plain` is
    /// `fsync`, what SQLite's unix VFS gives a directory: for a directory change whose loss a later start repairs
    /// (see ``flushDirectory(_:_:)``).
    ///
    /// Two apply only to a replacement, never to `FileSystem.sync`. `dataOnly` flushes the new file's data as `full`
    /// does (so the file is never unreadable: the rename may reach the disk before the directory is flushed, never
    /// before the data) and leaves its rename to the directory's next flush: for a replacement whose loss a start
    /// repairs (a consent change's gate state, committed by its ledger line first; a record of owed work done,
    /// which the next start does again). `unflushed` flushes nothing, the rename included: only for a cache that is checked against what it
    /// caches before it is used and ignored on any doubt (the consent ledger's checkpoint), since a power loss can
    /// leave it old, missing, empty, cut short or zeroed.
    package enum Durability: Sendable {
        case full, ordered, plain, dataOnly, unflushed
    }

    /// Set around a gate state's save for a consent change whose record was just appended to the file ledger, under
    /// the same hold of the directory's lock: the file store then writes it ``Durability/dataOnly`` when
    /// the state it replaces records a ledger point (``FeatureStateRecord/ledgerLength``). The flushed ledger line is
    /// the commit point; a state a power loss took back to the one before lags the ledger, and the next start replays
    /// the ledger's tail over it, as a journal replays a committed record.
    @TaskLocal package static var isCommittedElsewhere = false

    /// Flushes the file's data to the disk. On Darwin `fsync` only hands it to the drive, which may keep it in a
    /// volatile cache; `F_FULLFSYNC` asks the drive to write it through. Where the file system does not support
    /// that, `fsync` is the best there is.
    static func flushToDisk(_ fd: Int32, _ durability: Durability) -> Int32 {
        FileSystem.active.sync(fd, durability)
    }

    /// Flushes a directory after its entries changed (a file created, renamed or removed). ``Durability/full``
    /// unless told: what changes a directory here is mostly a take-away (a revocation's or a reset's deletions, a
    /// gate state's replacement) or the ledger's creation, which must survive a power loss, so on Darwin it is
    /// `F_FULLFSYNC`, not `fsync` (which leaves the change in the drive's cache). ``Durability/plain`` where a full
    /// flush buys nothing: a change whose loss leaves what a start repairs (folded intents that come back are folded
    /// again, a temporary file that comes back is removed again). Failures are ignored, as they were for `fsync`:
    /// the change itself is done.
    static func flushDirectory(_ fd: Int32, _ durability: Durability = .full) {
        _ = flushToDisk(fd, durability)
    }
}

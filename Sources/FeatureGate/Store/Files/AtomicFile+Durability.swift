import Foundation

extension AtomicFile {
    /// How far a write must reach before it returns.
    ///
    /// On Linux both are `fsync`. On Darwin `fsync` leaves the data in the drive's volatile cache: `full`
    /// (`F_FULLFSYNC`, milliseconds) writes it through, for what must survive a power loss, a refusal or a
    /// revocation above all; `ordered` (`F_BARRIERFSYNC`) only orders it before later writes, so a crash leaves
    /// the old or the new contents, for a write whose loss fails closed (an enable) or costs nothing.
    package enum Durability: Sendable {
        case full, ordered
    }

    /// Flushes the file's data to the disk. On Darwin `fsync` only hands it to the drive, which may keep it in a
    /// volatile cache; `F_FULLFSYNC` asks the drive to write it through. Where the file system does not support
    /// that, `fsync` is the best there is.
    static func flushToDisk(_ fd: Int32, _ durability: Durability) -> Int32 {
        FileSystem.active.sync(fd, durability)
    }

    /// Flushes a directory after its entries changed (a file created, files removed), with ``Durability/full``: what
    /// changes a directory here is a take-away (a revocation's or a reset's deletions) or the ledger's creation,
    /// which must survive a power loss, so on Darwin it is `F_FULLFSYNC`, not `fsync` (which leaves the change in
    /// the drive's cache). Failures are ignored, as they were for `fsync`: the change itself is done.
    static func flushDirectory(_ fd: Int32) {
        _ = flushToDisk(fd, .full)
    }
}

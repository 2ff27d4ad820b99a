import Foundation

extension AtomicFile {
    // MARK: The inter-process lock

    /// `.featuregate.lock`: the lock file in each anchor directory the package writes to or deletes from.
    ///
    /// It holds nothing; ``DirectoryLock`` takes `flock(2)` on it. It is kept (never deleted: a process that
    /// deleted it while another held the lock would let a third lock a new file) and is the one file besides the
    /// gate state and the ledger that revoke-all leaves.
    package static let lockFileName = ".featuregate.lock"

    /// The inter-process lock of one anchor directory, taken on demand by one operation and released when the
    /// operation ends.
    ///
    /// `flock(2)` (exclusive) on ``lockFileName``: it excludes other processes and, since every operation opens the
    /// file anew, other threads of this process. The file is created (owner-only, never through a link) the first
    /// time the lock is taken, which is only just before something is written or deleted: a process that changes
    /// nothing creates nothing. It is held for one synchronous operation only, never across an `await`, a callback
    /// or a suspension (iOS terminates a suspended app that holds a lock on a file in a shared container,
    /// `0xdead10cc`). Operations never nest, so a thread never waits for a lock it holds.
    package final class DirectoryLock {
        /// How many operations of this process hold each anchor directory's lock now. A bounded wait behind one of
        /// them is a wait for this process's own short operation, not for another process: it goes on past the
        /// bound while one of them holds the lock, instead of holding the caller's write, up to
        /// ``ownHolderWaitLimit``. (Per file system too: two simulated processes in one test process are two
        /// processes.)
        private static let holders = LockedValue<[Holder: Int]>([:])

        private struct Holder: Hashable {
            let fileSystem: ObjectIdentifier
            let path: String
        }

        /// The longest a bounded wait goes on behind this process's own holders: 2 s. Their operations are short, but
        /// one may wait, under the lock, for something the waiter holds (a wrapping store's write under the gate's
        /// in-process lock, against a ledger append that notes its length under the directory lock): past this, the
        /// waiter gives up as it would behind another process (`EWOULDBLOCK`, its write held and retried), and the
        /// holder goes on.
        static let ownHolderWaitLimit = Duration.seconds(2)

        private let anchor: Int32
        private let path: String
        private var fd: Int32 = -1

        private let holder: Holder
        /// Whether a bounded wait goes on behind this process's own holders (up to ``ownHolderWaitLimit``); a
        /// take-away's does not: it returns within the bound, durable as an intent, whoever holds the lock.
        private let waitsForOwnHolders: Bool
        /// Whether taking the lock folds the directory's intents first; the gate's flusher does not: it folds them
        /// into the save it makes under the lock, in one write (see `PrivacyManager.flushPass`).
        private let foldsIntents: Bool

        init(anchor: Int32, path: String, waitsForOwnHolders: Bool = true, foldsIntents: Bool = true) {
            self.anchor = anchor
            self.path = path
            self.waitsForOwnHolders = waitsForOwnHolders
            self.foldsIntents = foldsIntents
            holder = Holder(fileSystem: ObjectIdentifier(FileSystem.active), path: path)
        }

        /// Takes the lock, waiting for another holder to release it as long as ``AtomicFile/lockWait`` allows (past
        /// it: `EWOULDBLOCK`, see ``AtomicFile/isLockBusy(_:)``); does nothing when already taken.
        ///
        /// Something other than a regular file at the lock's name (a link, a FIFO) is deleted and replaced: it
        /// cannot be anyone's lock, and leaving it would block every write.
        package func acquire() throws(FileStoreError) {
            guard fd < 0, AtomicFile.heldLockPath != path else { return }  // (Taken already, by `withLock(of:)`.)
            let lockPath = (path.hasSuffix("/") ? path : path + "/") + lockFileName
            let fs = FileSystem.active
            var descriptor: Int32 = -1
            for attempt in 0..<2 {
                descriptor = retryingOnInterrupt {
                    fs.openat(anchor, lockFileName, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
                }
                var status = stat()
                if descriptor >= 0 && fs.fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFREG { break }
                let code = descriptor < 0 ? errno : EINVAL
                if descriptor >= 0 { _ = fs.close(descriptor) }
                descriptor = -1
                var found = stat()
                let isForeign =
                    fs.fstatat(anchor, lockFileName, &found, AT_SYMLINK_NOFOLLOW) == 0
                    && found.st_mode & S_IFMT != S_IFREG
                    && found.st_mode & S_IFMT != S_IFDIR
                guard attempt == 0, isForeign, fs.unlinkat(anchor, lockFileName, 0) == 0 else {
                    throw AtomicFile.error(path: lockPath, operation: .lock, errno: code, at: lockFileName, in: anchor)
                }
            }
            var result = AtomicFile.lockExclusively(descriptor)  // As long as `lockWait` allows.
            var code = errno
            let giveUp = ContinuousClock.now + Self.ownHolderWaitLimit
            while result != 0 && code == EWOULDBLOCK && waitsForOwnHolders && (AtomicFile.lockWait ?? .zero) > .zero
                && Self.holders.withLock({ $0[holder, default: 0] > 0 }) && ContinuousClock.now < giveUp
            {
                result = AtomicFile.lockExclusively(descriptor)
                code = errno
            }
            if result != 0 {
                _ = fs.close(descriptor)
                throw FileStoreError(path: lockPath, operation: .lock, code: code)
            }
            fd = descriptor
            Self.holders.withLock { $0[holder, default: 0] += 1 }
            // Take-aways another process made durable while the lock was busy come first (one `fstatat` when none).
            if foldsIntents && IntentJournal.hasFolder(in: anchor) {
                AtomicFile.holdingLock(path) { IntentJournal.fold(in: path) }
            }
            if let admission = AtomicFile.admission, !AtomicFile.holdingLock(path, admission.allows) {
                release()
                throw FileStoreError(path: lockPath, operation: .lock, code: ECANCELED)
            }
        }

        /// Releases the lock if it was taken.
        func release() {
            guard fd >= 0 else { return }
            Self.holders.withLock { holders in
                holders[holder, default: 1] -= 1
                if holders[holder] == 0 { holders[holder] = nil }
            }
            _ = FileSystem.active.close(fd)  // Closing the only descriptor of the open file releases the flock.
            fd = -1
        }
    }
}

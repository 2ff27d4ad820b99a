import Foundation

extension AtomicFile {
    /// How long an operation on this thread (or task) waits for another holder of a data directory's lock: `nil`,
    /// the default, waits as long as it takes; `.zero` tries once; any other duration waits at most that long.
    ///
    /// Bound with `AtomicFile.$lockWait.withValue(...)` around the operations whose caller must not wait on another
    /// process (the gate's saves, start-up's housekeeping). An operation that gives up throws a ``FileStoreError`` of
    /// operation `lock` and code `EWOULDBLOCK` (``isLockBusy(_:)``): nothing was read or written.
    @TaskLocal package static var lockWait: Duration?

    /// The longest a caller of the gate waits for a lock another process holds before its write is held in memory
    /// and retried later: 100 ms.
    package static let lockWaitBound = Duration.milliseconds(100)

    /// What an operation on this thread (or task) checks once it holds a data directory's lock and the intents are
    /// folded, before it writes: `false` refuses the write (a `FileStoreError` of operation `lock` and code
    /// `ECANCELED`, ``isRefusedUnderLock(_:)``). `GatedStorage` re-checks its gate here, so no write lands after a
    /// "no" another process made. It runs with the lock held: it reads, and takes no lock of that directory.
    ///
    /// A struct, not the closure itself: a task-local whose value is of function type crashes optimized builds
    /// (Swift 6.3.1, Linux; see ``WriteAdmission``).
    @TaskLocal package static var admission: WriteAdmission?

    /// Whether `error` is a write ``admission`` refused under the lock.
    package static func isRefusedUnderLock(_ error: any Error) -> Bool {
        guard let error = error as? FileStoreError else { return false }
        return error.operation == .lock && error.code == ECANCELED
    }

    /// `lockWait`, at most ``lockWaitBound``: what an operation whose caller must not wait on another process uses.
    package static var boundedLockWait: Duration { lockWait.map { min($0, lockWaitBound) } ?? lockWaitBound }

    /// Whether `error` is a lock another process held past the wait allowed (see ``lockWait``).
    package static func isLockBusy(_ error: any Error) -> Bool {
        guard let error = error as? FileStoreError else { return false }
        return error.operation == .lock && error.code == EWOULDBLOCK
    }

    /// The anchor directory whose lock this thread holds through ``withLock(of:waitingAtMost:inside:create:_:)``: a
    /// ``DirectoryLock`` of that directory taken inside does not take it again.
    ///
    /// Per thread, not a task-local: a task started inside (from an observer, say) runs later, without the lock, and
    /// must take it itself.
    static var heldLockPath: String? {
        Thread.current.threadDictionary[heldLockKey] as? String
    }

    private static let heldLockKey = "FeatureGate.AtomicFile.heldLockPath"

    /// Runs `body` with ``heldLockPath`` set to `path` on this thread.
    @inline(__always)
    static func holdingLock<Result>(_ path: String, _ body: () -> Result) -> Result {
        // The thread dictionary's work out of line: inlined, it was copied into every caller of every type.
        let previous = setHeldLockPath(path)
        defer { restoreHeldLockPath(previous) }
        return body()
    }

    /// Sets ``heldLockPath`` to `path` on this thread; returns what it was, for ``restoreHeldLockPath(_:)``.
    @inline(never)
    private static func setHeldLockPath(_ path: String) -> Any? {
        let dictionary = Thread.current.threadDictionary
        let previous = dictionary[heldLockKey]
        dictionary[heldLockKey] = path
        return previous
    }

    /// Sets ``heldLockPath`` back to what ``setHeldLockPath(_:)`` returned.
    @inline(never)
    private static func restoreHeldLockPath(_ previous: Any?) {
        Thread.current.threadDictionary[heldLockKey] = previous
    }

    /// Takes `flock(LOCK_EX)` on `descriptor`, waiting as ``lockWait`` allows; returns 0, or -1 with `errno` set
    /// (`EWOULDBLOCK` when the wait ran out).
    ///
    /// A bounded wait is a blocking `flock` on a thread of its own, so it queues with the other waiters (polling a
    /// non-blocking one would lose to every blocked waiter); when the bound passes first, that thread lets the lock
    /// go as soon as it gets it.
    static func lockExclusively(_ descriptor: Int32) -> Int32 {
        let fs = FileSystem.active
        guard let bound = lockWait else {
            while true {
                if fs.flock(descriptor, LOCK_EX) == 0 { return 0 }
                if errno != EINTR { return -1 }
            }
        }
        while true {
            if fs.flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return 0 }
            if errno != EINTR { break }
        }
        guard errno == EWOULDBLOCK || errno == EAGAIN else { return -1 }
        guard bound > .zero else {
            errno = EWOULDBLOCK
            return -1
        }
        // The waiting thread has a descriptor of the same open file: its lock is this descriptor's, and closing it
        // after this one was closed (the wait abandoned) releases the lock.
        let copy = fs.dup(descriptor)
        guard copy >= 0 else { return -1 }
        let outcome = LockedValue<(done: Bool, code: Int32, abandoned: Bool)>((false, 0, false))
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var code: Int32 = 0
            while fs.flock(copy, LOCK_EX) != 0 {
                if errno != EINTR {
                    code = errno
                    break
                }
            }
            outcome.withLock { $0 = (true, code, $0.abandoned) }
            _ = fs.close(copy)
            finished.signal()
        }
        _ = finished.wait(timeout: .now() + .nanoseconds(Int(bound / .nanoseconds(1))))
        let (done, code) = outcome.withLock { state -> (Bool, Int32) in
            if !state.done { state.abandoned = true }
            return (state.done, state.code)
        }
        guard done else {
            errno = EWOULDBLOCK
            return -1
        }
        if code != 0 { errno = code }
        return code == 0 ? 0 : -1
    }

    /// Runs `body` holding the inter-process lock of the directory `file` is in, waiting at most `bound` for it;
    /// returns `nil` when another holder kept it that long. Nothing inside waits for that lock again, and nothing
    /// else inside waits for any lock (``lockWait`` is zero): take this lock before any lock of the process's own,
    /// never under one. When the directory or its lock file cannot be opened, `body` runs without it (its own
    /// operations report why).
    ///
    /// - Parameters:
    ///   - bound: How long to wait for the lock; `nil` waits as long as it takes.
    ///   - inside: The ``lockWait`` for the locks of other directories that `body` takes (zero by default).
    ///   - create: Whether to create the directory when it does not exist yet (its lock file is created with it).
    ///   - takesAway: Whether `body` makes a take-away: its wait ends at `bound` even behind this process's own
    ///     holders (a fold, say), which other waits outlast (``DirectoryLock/ownHolderWaitLimit``).
    ///   - foldsIntents: Whether the directory's intents are folded as the lock is taken (as every other holder
    ///     does); `false` only for a holder that folds them itself before it writes anything.
    package static func withLock<Result>(
        of file: URL, waitingAtMost bound: Duration?, inside: Duration? = .zero, create: Bool = false,
        takesAway: Bool = false, foldsIntents: Bool = true, _ body: () -> Result
    ) -> Result? {
        let location = FileLocation(file: file)
        let anchor = openLockedDirectory(location, create: create)
        guard anchor >= 0 else { return $lockWait.withValue(inside) { body() } }
        let lock = DirectoryLock(
            anchor: anchor, path: location.anchor, waitsForOwnHolders: !takesAway, foldsIntents: foldsIntents)
        defer {
            lock.release()
            closeLockedDirectory(anchor)
        }
        if let error = acquire(lock, waitingAtMost: bound) {
            if isLockBusy(error) { return nil }
            return $lockWait.withValue(inside) { body() }
        }
        return holdingLock(location.anchor) { $lockWait.withValue(inside) { body() } }
    }
}

extension AtomicFile {
    /// Opens the anchor directory of ``withLock(of:waitingAtMost:inside:create:takesAway:_:)`` (creating it when
    /// `create` is true), or returns `-1`. Out of line: inlined, it was copied into every caller of every type.
    @inline(never)
    fileprivate static func openLockedDirectory(_ location: FileLocation, create: Bool) -> Int32 {
        let fs = FileSystem.active
        var anchor = fs.open(location.anchor, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        if anchor < 0 && errno == ENOENT && create {
            try? createDirectory(location.anchor)
            anchor = fs.open(location.anchor, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        }
        return anchor
    }

    /// Takes `lock`, waiting at most `bound`; returns why it could not. Out of line, as ``openLockedDirectory(_:create:)``.
    @inline(never)
    fileprivate static func acquire(_ lock: DirectoryLock, waitingAtMost bound: Duration?) -> (any Error)? {
        do {
            try $lockWait.withValue(bound) { try lock.acquire() }
            return nil
        } catch {
            return error
        }
    }

    /// Closes what ``openLockedDirectory(_:create:)`` opened.
    @inline(never)
    fileprivate static func closeLockedDirectory(_ anchor: Int32) {
        _ = FileSystem.active.close(anchor)
    }
}

/// The check a write makes under its directory's lock (``AtomicFile/admission``): `true` lets it write.
///
/// It wraps the closure because a `@TaskLocal` whose value is of function type is miscompiled with `-O` (Swift 6.3.1,
/// Linux x86-64): `withValue` inlined into a synchronous function passes `swift_task_localValuePush` the metadata of
/// the closure's lowered SIL type (`$sxRi_zRi0_zlySbIseghr_SgMD`, a substituted function type the runtime cannot
/// instantiate), so the push dereferences a null metadata pointer (SIGSEGV at `0xfffffffffffffff8`). Debug builds run.
/// The reduced case, crashing with `swiftc -O` and running with `-Onone`:
///
///     enum Box { @TaskLocal static var admission: (@Sendable () -> Bool)? }
///     @inline(never) func check() -> Bool { Box.admission?() ?? true }
///     @inline(never) func write(_ s: String) -> Bool {
///         let flag = s.count > 0
///         return Box.$admission.withValue({ flag }) { check() }
///     }
///     print(write(CommandLine.arguments[0]))
///
/// A nominal type (this struct, or a final class) as the value is pushed with its own metadata and runs optimized.
/// Keep every task-local of this package nominal-typed: `scripts/check-task-locals.sh` fails CI on one that is not.
package struct WriteAdmission: Sendable {
    /// Whether the write may go ahead, asked with the lock held.
    package let allows: @Sendable () -> Bool

    /// Wraps `allows`.
    package init(_ allows: @escaping @Sendable () -> Bool) { self.allows = allows }
}

extension PrivacyManagerDiagnostic {
    /// Whether this reports a save another process's lock refused (a try that did not wait).
    var isLockBusy: Bool {
        switch self {
        case .storeBusyWritesHeld: true
        case .saveFailed(_, let error): AtomicFile.isLockBusy(error)
        default: false
        }
    }
}

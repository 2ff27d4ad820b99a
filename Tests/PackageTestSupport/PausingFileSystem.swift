import FeatureGate
import Foundation

/// One stop of a thread at a system call, for tests that must land a change at a fixed point of another thread's
/// work: the thread stops the first time it makes the call, the test waits until it has (``waitUntilReached()``),
/// does what must come in between, then lets it go on (``release()``). No order depends on timing.
public final class Pause: Sendable {
    private let reached = DispatchSemaphore(value: 0)
    private let resumed = DispatchSemaphore(value: 0)
    private let taken = LockedValue(false)

    /// A pause no thread has reached.
    public init() {}

    /// Stops this thread the first time any thread gets here, until ``release()``; later calls go straight on.
    public func stopOnce() {
        let first = taken.withLock { taken -> Bool in
            defer { taken = true }
            return !taken
        }
        guard first else { return }
        reached.signal()
        resumed.wait()
    }

    /// Returns once a thread stopped here.
    public func waitUntilReached() { reached.wait() }

    /// Lets the stopped thread go on.
    public func release() { resumed.signal() }
}

extension FileSystem {
    /// The system's calls, with `flock` stopping at `pause` first (the first time only): where a holder of the data
    /// directory's lock is about to take it.
    package static func system(stoppingAtFlock pause: Pause) -> FileSystem {
        let system = FileSystem.system
        return FileSystem(
            open: system.open, openat: system.openat, close: system.close, dup: system.dup, read: system.read,
            pread: system.pread, write: system.write, truncate: system.truncate, sync: system.sync,
            renameat: system.renameat, unlinkat: system.unlinkat, mkdir: system.mkdir, mkdirat: system.mkdirat,
            fstat: system.fstat, fstatat: system.fstatat, lstat: system.lstat, fchmodat: system.fchmodat,
            flock: { fd, operation in
                pause.stopOnce()
                return system.flock(fd, operation)
            },
            entries: system.entries)
    }
}

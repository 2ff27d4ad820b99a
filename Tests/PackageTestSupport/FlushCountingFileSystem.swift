import FeatureGate
import Foundation

/// The system's file system (libc, through the file layer's ``FileSystem`` seam), counting the flushes made through
/// it: every `fsync` (`F_FULLFSYNC` / `F_BARRIERFSYNC` on Darwin), and of them those of directories, and the opens
/// of intent files. Bind it with `FileSystem.$current.withValue(counter.fileSystem) { … }`: background work a call
/// leaves (a held write, a flush made off the caller's thread) takes the binding along and is counted too.
public final class FlushCountingFileSystem: Sendable {
    private let counts = LockedValue((files: 0, directories: 0))
    private let callerCounts = LockedValue(0)
    /// What marks a thread as the caller's while ``asCaller(_:)`` runs.
    private let callerMark = "PackageTestSupport.FlushCountingFileSystem.\(UUID().uuidString)"
    private let paths = LockedValue<[String]>([])
    /// How many times each intent file (`*.intent`) was opened, by name.
    package let intentOpens = LockedValue<[String: Int]>([:])

    /// A counter at zero.
    public init() {}

    /// Every flush so far.
    public var flushes: Int { counts.withLock { $0.files + $0.directories } }
    /// What each flush so far flushed, in order: the last component of its path, a directory's ending in `/` (for
    /// messages; read from `/proc/self/fd` where there is one).
    public var flushed: [String] { paths.withLock { $0 } }
    /// The flushes of directories so far.
    public var directoryFlushes: Int { counts.withLock { $0.directories } }
    /// The flushes made so far on a thread while it ran ``asCaller(_:)``: the caller's own, not those it left to
    /// another thread.
    public var callerFlushes: Int { callerCounts.withLock { $0 } }

    /// Runs `body` on this thread, counting the flushes this thread makes meanwhile as the caller's
    /// (``callerFlushes``).
    public func asCaller<Result>(_ body: () throws -> Result) rethrows -> Result {
        let dictionary = Thread.current.threadDictionary
        dictionary[callerMark] = true
        defer { dictionary.removeObject(forKey: callerMark) }
        return try body()
    }

    /// The file system to bind.
    package var fileSystem: FileSystem {
        let system = FileSystem.system
        return FileSystem(
            open: system.open,
            openat: { [intentOpens] directory, name, flags, mode in
                if name.hasSuffix(".intent") { intentOpens.withLock { $0[name, default: 0] += 1 } }
                return system.openat(directory, name, flags, mode)
            },
            close: system.close, dup: system.dup, read: system.read, pread: system.pread, write: system.write,
            truncate: system.truncate,
            sync: { [counts, paths, callerCounts, callerMark] fd, durability in
                var status = stat()
                let isDirectory = system.fstat(fd, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
                counts.withLock { isDirectory ? ($0.directories += 1) : ($0.files += 1) }
                if Thread.current.threadDictionary[callerMark] != nil { callerCounts.withLock { $0 += 1 } }
                let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) ?? "?"
                let name = path.split(separator: "/").last.map(String.init) ?? path
                paths.withLock { $0.append(name + (isDirectory ? "/" : "")) }
                return system.sync(fd, durability)
            },
            renameat: system.renameat, unlinkat: system.unlinkat, mkdir: system.mkdir, mkdirat: system.mkdirat,
            fstat: system.fstat, fstatat: system.fstatat, lstat: system.lstat, fchmodat: system.fchmodat,
            flock: system.flock, entries: system.entries)
    }

    /// Waits until no flush came for `quiet` (polling), at most `limit`: what a call left to another thread is done.
    public func settle(quiet: Duration = .milliseconds(50), limit: Duration = .seconds(10)) async {
        let clock = ContinuousClock()
        let end = clock.now + limit
        var last = flushes
        var since = clock.now
        while clock.now < end {
            try? await Task.sleep(for: .milliseconds(5))
            let now = flushes
            if now != last {
                last = now
                since = clock.now
            } else if clock.now - since >= quiet {
                return
            }
        }
    }
}

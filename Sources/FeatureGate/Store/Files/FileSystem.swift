// The files of this folder call libc (open, fsync, flock...) with `import Foundation` alone: Foundation re-exports
// the platform's C library everywhere (Darwin on Apple platforms; Glibc, Musl or Android in swift-corelibs-foundation).
import Foundation

/// The seam between the file layer and the operating system: every system call the package makes on its data
/// directory (``AtomicFile``, ``AtomicFile/DirectoryLock``, ``IntentJournal``) goes through one of these closures.
///
/// In an app it is always ``system``, libc itself. Tests bind ``current`` to a simulated file system (an in-memory
/// tree whose unsynced writes and directory changes a simulated crash drops, keeps or garbles, as SQLite's crash tests
/// and ALICE do), so every durable step of a change can be crashed in turn and two simulated processes' steps
/// interleaved, by enumeration rather than by sampling kills.
///
/// What it costs the real path: one task-local read and one retain per call, next to a system call that costs
/// microseconds (and an `fsync`, milliseconds). Nothing on the gate's hot path (`isEnabled`, `track`) touches it, and
/// it adds no system call: a process with every feature off still makes none.
///
/// The closures follow libc's conventions (a negative result sets `errno`), with two exceptions that hide what a
/// simulation cannot model well: ``sync`` takes the ``AtomicFile/Durability`` asked for (`F_FULLFSYNC`,
/// `F_BARRIERFSYNC` or `fsync` on Darwin, `fsync` elsewhere), and ``entries`` lists a directory descriptor at once (`readdir`).
package final class FileSystem: Sendable {
    /// `open(2)` of a path (the anchor directory only; everything below it is reached with ``openat``).
    package let open: @Sendable (_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32
    /// `openat(2)`.
    package let openat: @Sendable (_ directory: Int32, _ name: String, _ flags: Int32, _ mode: mode_t) -> Int32
    /// `close(2)`.
    package let close: @Sendable (_ fd: Int32) -> Int32
    /// `dup(2)`.
    package let dup: @Sendable (_ fd: Int32) -> Int32
    /// `read(2)`.
    package let read: @Sendable (_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int
    /// `pread(2)`.
    package let pread: @Sendable (_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, _ offset: Int) -> Int
    /// `write(2)`.
    package let write: @Sendable (_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int
    /// `ftruncate(2)`.
    package let truncate: @Sendable (_ fd: Int32, _ length: Int) -> Int32
    /// Flushes a file or a directory to the disk as far as `durability` asks (see ``AtomicFile/Durability``).
    package let sync: @Sendable (_ fd: Int32, _ durability: AtomicFile.Durability) -> Int32
    /// `renameat(2)`.
    package let renameat: @Sendable (_ from: Int32, _ old: String, _ to: Int32, _ new: String) -> Int32
    /// `unlinkat(2)` (`AT_REMOVEDIR` for a directory).
    package let unlinkat: @Sendable (_ directory: Int32, _ name: String, _ flags: Int32) -> Int32
    /// `mkdir(2)` of a path (the anchor and its missing parents).
    package let mkdir: @Sendable (_ path: String, _ mode: mode_t) -> Int32
    /// `mkdirat(2)`.
    package let mkdirat: @Sendable (_ directory: Int32, _ name: String, _ mode: mode_t) -> Int32
    /// `fstat(2)`.
    package let fstat: @Sendable (_ fd: Int32, _ status: UnsafeMutablePointer<stat>) -> Int32
    /// `fstatat(2)`.
    package let fstatat:
        @Sendable (_ directory: Int32, _ name: String, _ status: UnsafeMutablePointer<stat>, _ flags: Int32) -> Int32
    /// `lstat(2)`.
    package let lstat: @Sendable (_ path: String, _ status: UnsafeMutablePointer<stat>) -> Int32
    /// `fchmodat(2)`.
    package let fchmodat: @Sendable (_ directory: Int32, _ name: String, _ mode: mode_t, _ flags: Int32) -> Int32
    /// `flock(2)`.
    package let flock: @Sendable (_ fd: Int32, _ operation: Int32) -> Int32
    /// The names in the directory `fd` (without `.` and `..`), or `nil` with `errno` set. `fd` stays open.
    package let entries: @Sendable (_ fd: Int32) -> [String]?

    package init(
        open: @escaping @Sendable (String, Int32, mode_t) -> Int32,
        openat: @escaping @Sendable (Int32, String, Int32, mode_t) -> Int32,
        close: @escaping @Sendable (Int32) -> Int32,
        dup: @escaping @Sendable (Int32) -> Int32,
        read: @escaping @Sendable (Int32, UnsafeMutableRawPointer?, Int) -> Int,
        pread: @escaping @Sendable (Int32, UnsafeMutableRawPointer?, Int, Int) -> Int,
        write: @escaping @Sendable (Int32, UnsafeRawPointer?, Int) -> Int,
        truncate: @escaping @Sendable (Int32, Int) -> Int32,
        sync: @escaping @Sendable (Int32, AtomicFile.Durability) -> Int32,
        renameat: @escaping @Sendable (Int32, String, Int32, String) -> Int32,
        unlinkat: @escaping @Sendable (Int32, String, Int32) -> Int32,
        mkdir: @escaping @Sendable (String, mode_t) -> Int32,
        mkdirat: @escaping @Sendable (Int32, String, mode_t) -> Int32,
        fstat: @escaping @Sendable (Int32, UnsafeMutablePointer<stat>) -> Int32,
        fstatat: @escaping @Sendable (Int32, String, UnsafeMutablePointer<stat>, Int32) -> Int32,
        lstat: @escaping @Sendable (String, UnsafeMutablePointer<stat>) -> Int32,
        fchmodat: @escaping @Sendable (Int32, String, mode_t, Int32) -> Int32,
        flock: @escaping @Sendable (Int32, Int32) -> Int32,
        entries: @escaping @Sendable (Int32) -> [String]?
    ) {
        self.open = open
        self.openat = openat
        self.close = close
        self.dup = dup
        self.read = read
        self.pread = pread
        self.write = write
        self.truncate = truncate
        self.sync = sync
        self.renameat = renameat
        self.unlinkat = unlinkat
        self.mkdir = mkdir
        self.mkdirat = mkdirat
        self.fstat = fstat
        self.fstatat = fstatat
        self.lstat = lstat
        self.fchmodat = fchmodat
        self.flock = flock
        self.entries = entries
    }

    /// The file system this task's file operations use in place of ``system`` (`nil`, always in an app: libc).
    ///
    /// A task-local, so a simulation bound by one test is seen by nothing else; work that leaves the task for a
    /// thread of its own (a bounded lock wait) takes ``active`` with it.
    @TaskLocal package static var current: FileSystem?

    /// The file system of this task: ``current``, or ``system``.
    package static var active: FileSystem { current ?? system }

    /// libc.
    package static let system = FileSystem(
        open: { path, flags, mode in Foundation.open(path, flags, mode) },
        openat: { directory, name, flags, mode in Foundation.openat(directory, name, flags, mode) },
        close: { Foundation.close($0) },
        dup: { Foundation.dup($0) },
        read: { fd, buffer, count in Foundation.read(fd, buffer, count) },
        pread: { fd, buffer, count, offset in Foundation.pread(fd, buffer, count, off_t(offset)) },
        write: { fd, buffer, count in Foundation.write(fd, buffer, count) },
        truncate: { fd, length in Foundation.ftruncate(fd, off_t(length)) },
        sync: { fd, durability in
            #if canImport(Darwin)
            if durability != .plain, fcntl(fd, durability == .ordered ? F_BARRIERFSYNC : F_FULLFSYNC) == 0 {
                return 0
            }
            #endif
            return Foundation.fsync(fd)
        },
        renameat: { from, old, to, new in Foundation.renameat(from, old, to, new) },
        unlinkat: { directory, name, flags in Foundation.unlinkat(directory, name, flags) },
        mkdir: { path, mode in Foundation.mkdir(path, mode) },
        mkdirat: { directory, name, mode in Foundation.mkdirat(directory, name, mode) },
        fstat: { fd, status in Foundation.fstat(fd, status) },
        fstatat: { directory, name, status, flags in Foundation.fstatat(directory, name, status, flags) },
        lstat: { path, status in Foundation.lstat(path, status) },
        fchmodat: { directory, name, mode, flags in Foundation.fchmodat(directory, name, mode, flags) },
        flock: { fd, operation in systemFlock(fd, operation) },
        entries: { fd in
            let copy = Foundation.dup(fd)
            guard copy >= 0, let stream = fdopendir(copy) else { return nil }
            defer { closedir(stream) }
            // The copy shares its position with `fd`: start from the beginning, whatever an earlier listing left.
            rewinddir(stream)
            var names: [String] = []
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                if name != "." && name != ".." { names.append(name) }
            }
            return names
        })
}

/// libc's `flock(2)`: at file scope, where the function is not hidden by the struct of the same name.
private func systemFlock(_ fd: Int32, _ operation: Int32) -> Int32 {
    flock(fd, operation)
}

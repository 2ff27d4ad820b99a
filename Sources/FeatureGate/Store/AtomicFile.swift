import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// A file operation that failed, with the path, what was being done, and the system's error.
public struct FileStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What the store was doing.
    public enum Operation: String, Sendable, Hashable {
        case open, read, write, sync, rename, remove, createDirectory = "create directory"
    }

    /// The path the operation was on.
    public let path: String
    /// What the store was doing.
    public let operation: Operation
    /// The `errno` value the system returned.
    public let code: Int32

    /// `PATH: cannot OPERATION: system message`.
    public var description: String {
        "\(path): cannot \(operation.rawValue): \(String(cString: strerror(code)))"
    }
}

/// Whole-file reads and crash-safe replacements, shared by every file-backed part of the package.
///
/// `FileManager.replaceItemAt` is not used: on Linux it can lose the file. The sequence here is the classic
/// one: write a temporary file in the same directory, flush it to the disk (`fsync`; on Darwin `F_FULLFSYNC` or
/// `F_BARRIERFSYNC`, see ``Durability``), `rename` it over the target, flush the directory the same way.
package enum AtomicFile {
    /// How far a write must reach before it returns.
    ///
    /// On Linux both are `fsync`. On Darwin `fsync` leaves the data in the drive's volatile cache: `full`
    /// (`F_FULLFSYNC`, milliseconds) writes it through, for what must survive a power loss, a refusal or a
    /// revocation above all; `ordered` (`F_BARRIERFSYNC`) only orders it before later writes, so a crash leaves
    /// the old or the new contents, for a write whose loss fails closed (an enable) or costs nothing.
    package enum Durability: Sendable {
        case full, ordered
    }

    private static let temporaryCounter = Atomic<Int>(0)

    /// Reads the whole file, or returns `nil` when it does not exist. Creates nothing.
    package static func read(at url: URL) throws(FileStoreError) -> Data? {
        let path = url.path(percentEncoded: false)
        let fd = retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC) }
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw FileStoreError(path: path, operation: .open, code: errno)
        }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                retryingOnInterrupt { Glue.read(fd, raw.baseAddress, raw.count) }
            }
            if count < 0 { throw FileStoreError(path: path, operation: .read, code: errno) }
            if count == 0 { return data }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    /// Replaces the file's contents with `data` so that a crash leaves either the old or the new contents.
    ///
    /// The directory is created (with intermediate directories) only if the first attempt finds it missing.
    /// The file is created readable and writable by its owner only.
    package static func write(
        _ data: Data, to url: URL, durability: Durability = .full
    ) throws(FileStoreError) {
        let path = url.path(percentEncoded: false)
        let directory = url.deletingLastPathComponent().path(percentEncoded: false)
        let temporary =
            directory + (directory.hasSuffix("/") ? "" : "/") + "." + url.lastPathComponent
            + ".tmp-\(getpid())-\(temporaryCounter.add(1, ordering: .relaxed).newValue)"

        var fd = openForCreate(temporary)
        if fd < 0 && errno == ENOENT {
            try createDirectory(directory)
            fd = openForCreate(temporary)
        }
        if fd < 0 { throw FileStoreError(path: temporary, operation: .open, code: errno) }

        do throws(FileStoreError) {
            let writeError: Int32? = data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = retryingOnInterrupt {
                        Glue.write(fd, raw.baseAddress! + offset, raw.count - offset)
                    }
                    if written < 0 { return errno }
                    offset += written
                }
                return nil
            }
            if let writeError { throw FileStoreError(path: temporary, operation: .write, code: writeError) }
            if flushToDisk(fd, durability) != 0 {
                throw FileStoreError(path: temporary, operation: .sync, code: errno)
            }
            close(fd)
            fd = -1
            if rename(temporary, path) != 0 { throw FileStoreError(path: path, operation: .rename, code: errno) }
        } catch {
            if fd >= 0 { close(fd) }
            unlink(temporary)
            throw error
        }
        syncDirectory(directory, durability)
    }

    /// Deletes the file. A file that does not exist is not an error.
    package static func remove(at url: URL) throws(FileStoreError) {
        let path = url.path(percentEncoded: false)
        if unlink(path) != 0 && errno != ENOENT {
            throw FileStoreError(path: path, operation: .remove, code: errno)
        }
        syncDirectory(url.deletingLastPathComponent().path(percentEncoded: false), .full)
    }

    private static func openForCreate(_ path: String) -> Int32 {
        retryingOnInterrupt { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
    }

    /// Creates `path` and any missing parents, owner-only, with `mkdir(2)`, so a failure reports the `errno` of
    /// the very call that failed (a `FileManager` call leaves `errno` stale or unset) and the directory it was for.
    /// Creates `path` and any missing parents, owner-only. It tries `path` first and walks up only while a parent
    /// is missing, so it never touches directories above the first one that exists (which a sandbox may hide).
    private static func createDirectory(_ path: String) throws(FileStoreError) {
        if mkdir(path, 0o700) == 0 { return }
        let code = errno
        if code == EEXIST { return }
        guard code == ENOENT, let slash = path.lastIndex(of: "/"), slash != path.startIndex else {
            throw FileStoreError(path: path, operation: .createDirectory, code: code)
        }
        try createDirectory(String(path[..<slash]))
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw FileStoreError(path: path, operation: .createDirectory, code: errno)
        }
    }

    /// Flushes the file (or directory) as ``Durability`` says. Where the file system supports neither `fcntl`,
    /// `fsync` is the best there is.
    private static func flushToDisk(_ fd: Int32, _ durability: Durability) -> Int32 {
        #if canImport(Darwin)
        if fcntl(fd, durability == .full ? F_FULLFSYNC : F_BARRIERFSYNC) == 0 { return 0 }
        #endif
        return fsync(fd)
    }

    /// Makes a rename or unlink in `path` durable. Best effort: some file systems refuse to sync directories.
    private static func syncDirectory(_ path: String, _ durability: Durability) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = flushToDisk(fd, durability)
        close(fd)
    }

    private static func retryingOnInterrupt<T: BinaryInteger>(_ body: () -> T) -> T {
        while true {
            let result = body()
            if result >= 0 || errno != EINTR { return result }
        }
    }
}

/// The libc calls whose names clash with the static methods above.
private enum Glue {
    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
        #elseif canImport(Musl)
        Musl.read(fd, buffer, count)
        #elseif canImport(Darwin)
        Darwin.read(fd, buffer, count)
        #elseif canImport(Android)
        Android.read(fd, buffer, count)
        #endif
    }

    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(fd, buffer, count)
        #elseif canImport(Musl)
        Musl.write(fd, buffer, count)
        #elseif canImport(Darwin)
        Darwin.write(fd, buffer, count)
        #elseif canImport(Android)
        Android.write(fd, buffer, count)
        #endif
    }
}

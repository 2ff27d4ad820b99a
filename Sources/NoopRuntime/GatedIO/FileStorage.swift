import FeatureGate
import Foundation

/// A ``Storage`` of files under one directory, written crash-safely.
///
/// Each name is a file under ``directory``. Writes go to a temporary file that is flushed to disk and renamed
/// over the target, so a crash leaves the old or the new contents; files are readable by their owner only.
/// The directory (and any subdirectory a name needs) is created on the first write, never before, so a
/// storage that is never written leaves no trace. ``removeAll()`` deletes the files and then the directories
/// it finds, including ``directory`` itself.
///
/// ## A hostile directory
/// Another process of the app group may have written the directory. Nothing in it can send an operation
/// elsewhere: the parent of ``directory`` (the SDK's data directory), ``directory`` itself and everything below are
/// reached without following symbolic links. A read opens only a regular file of at most ``maximumFileSize`` bytes
/// (a link, a FIFO, a device or a larger file is an error, and nothing blocks); a write replaces whatever is at the
/// name (a link itself, never its target); ``removeAll()`` deletes links themselves, keeps going past what it cannot
/// delete and then throws ``FileStorageError/notAllRemoved(removed:failures:)``. The files have no integrity
/// protection against a process that can write them.
///
/// ## Other processes
/// A write, a removal and ``removeAll()`` take the data directory's inter-process lock (a read takes none) and wait
/// for another process's hold of it at most 100 ms (less when the caller bounds it with a shorter wait): past that
/// they throw a `FileStoreError` of operation `lock` and code `EWOULDBLOCK`, having touched nothing, so no caller,
/// and no thread of the concurrency pool, is blocked behind a stopped process.
///
/// Thread safety: calls may come from any thread; writes to the same name race the way renames do (the last
/// one wins, whole).
public struct FileStorage: Storage, CustomStringConvertible {
    /// The default most bytes a read accepts.
    public static let defaultMaximumFileSize = 16 * 1024 * 1024

    /// The directory that holds the files.
    public let directory: URL
    /// The most bytes a read accepts: a larger file is refused unread.
    public let maximumFileSize: Int

    /// Creates a storage rooted at `directory`. Touches nothing.
    ///
    /// - Parameters:
    ///   - directory: The directory; neither it nor its parent may be a symbolic link.
    ///   - maximumFileSize: The most bytes a read accepts.
    public init(directory: URL, maximumFileSize: Int = defaultMaximumFileSize) {
        self.directory = directory
        self.maximumFileSize = maximumFileSize
    }

    /// `FileStorage(<path>)`.
    public var description: String {
        "FileStorage(\(UntrustedText.escapedPath(directory.path(percentEncoded: false))))"
    }

    /// Reads the file `name`, or returns `nil` when it does not exist.
    ///
    /// - Throws: ``FileStorageError/invalidName(_:)`` for a name ``FileStorage`` refuses, or `FileStoreError` with
    ///   the path and what went wrong (a link, not a regular file, over ``maximumFileSize``, a system error).
    public func read(_ name: String) throws -> Data? {
        try AtomicFile.read(location(for: name), limit: maximumFileSize)  // (Reads take no lock.)
    }

    /// Replaces the file `name` with `data` atomically, creating directories as needed.
    public func write(_ data: Data, to name: String) throws {
        // A subsystem's own data: losing the latest write to a power cut costs nothing, so it is only ordered.
        let location = try location(for: name)
        try bounded { try AtomicFile.write(data, to: location, durability: .ordered) }
    }

    /// Deletes the file `name` (a link itself); returns whether it existed.
    @discardableResult
    public func remove(_ name: String) throws -> Bool {
        let location = try location(for: name)
        return try bounded { try AtomicFile.remove(location) }
    }

    /// Deletes everything under ``directory``, then ``directory`` itself, without following symbolic links.
    ///
    /// - Returns: The names (relative paths) of the files deleted, sorted. Empty, with nothing touched, when
    ///   the directory does not exist. A link where ``directory`` should be is deleted itself and returned by its
    ///   path.
    /// - Throws: ``FileStorageError/notAllRemoved(removed:failures:)`` when something could not be deleted; the
    ///   rest was.
    public func removeAll() throws -> [String] {
        let removal = bounded { AtomicFile.removeTree(FileLocation(directory: directory)) }
        guard removal.failures.isEmpty else {
            throw FileStorageError.notAllRemoved(removed: removal.removed, failures: removal.failures)
        }
        return removal.removed
    }

    /// Runs `body` waiting at most ``AtomicFile/lockWaitBound`` (or the caller's shorter bound) for the lock.
    private func bounded<Result>(_ body: () throws -> Result) rethrows -> Result {
        try AtomicFile.$lockWait.withValue(AtomicFile.boundedLockWait, operation: body)
    }

    private func location(for name: String) throws(FileStorageError) -> FileLocation {
        let components = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard !name.isEmpty, !name.hasPrefix("/"), !UntrustedText.containsControlCharacters(name),
            components.allSatisfy({
                !$0.isEmpty && $0 != "." && $0 != ".." && $0.utf8.count <= AtomicFile.maximumNameLength
            })
        else { throw .invalidName(name) }
        return FileLocation(directory: directory, components: components)
    }
}

/// A name that ``FileStorage`` refuses because it would leave its directory, or what a removal could not delete.
///
/// File reads, writes and removals fail with `FileStoreError` (path, operation, what went wrong) instead.
public enum FileStorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name is empty, absolute, has an empty, `.` or `..` component or one longer than 255 bytes, or holds a
    /// control character (NUL included). The payload is the name found.
    case invalidName(String)
    /// A directory could not be removed (`errno` in `code`). ``FileStorage/removeAll()`` no longer throws it (it
    /// reports every failure in ``notAllRemoved(removed:failures:)``); kept so that code matching it still compiles.
    case directoryNotRemoved(path: String, code: Int32)
    /// ``FileStorage/removeAll()`` deleted `removed` but not what `failures` name.
    case notAllRemoved(removed: [String], failures: [FileStoreError])

    /// What was found and what was expected.
    public var description: String {
        switch self {
        case .invalidName(let name):
            "storage name \(UntrustedText.quoted(name)) is invalid: expected a relative path without empty, \".\" "
                + "or \"..\" parts, control characters or parts longer than 255 bytes"
        case .directoryNotRemoved(let path, let code):
            "\(UntrustedText.escapedPath(path)): cannot remove directory: \(String(cString: strerror(code)))"
        case .notAllRemoved(let removed, let failures):
            "removed \(removed.count) file\(removed.count == 1 ? "" : "s") but not everything: "
                + failures.map(\.description).joined(separator: "; ")
        }
    }
}

import FeatureGate
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// A ``Storage`` of files under one directory, written crash-safely.
///
/// Each name is a file under ``directory``. Writes go to a temporary file that is flushed to disk and renamed
/// over the target, so a crash leaves the old or the new contents; files are readable by their owner only.
/// The directory (and any subdirectory a name needs) is created on the first write, never before, so a
/// storage that is never written leaves no trace. ``removeAll()`` deletes the files and then the directories
/// it finds, including ``directory`` itself.
///
/// Thread safety: calls may come from any thread; writes to the same name race the way renames do (the last
/// one wins, whole).
public struct FileStorage: Storage, CustomStringConvertible {
    /// The directory that holds the files.
    public let directory: URL

    /// Creates a storage rooted at `directory`. Touches nothing.
    public init(directory: URL) {
        self.directory = directory
    }

    /// `FileStorage(<path>)`.
    public var description: String { "FileStorage(\(directory.path(percentEncoded: false)))" }

    /// Reads the file `name`, or returns `nil` when it does not exist.
    ///
    /// - Throws: ``FileStorageError/invalidName(_:)`` for an absolute name or one with `..`, or
    ///   `FileStoreError` with the path and the system's error.
    public func read(_ name: String) throws -> Data? {
        try AtomicFile.read(at: url(for: name))
    }

    /// Replaces the file `name` with `data` atomically, creating directories as needed.
    public func write(_ data: Data, to name: String) throws {
        // A subsystem's own data: losing the latest write to a power cut costs nothing, so it is only ordered.
        try AtomicFile.write(data, to: url(for: name), durability: .ordered)
    }

    /// Deletes the file `name`; returns whether it existed.
    @discardableResult
    public func remove(_ name: String) throws -> Bool {
        let url = try url(for: name)
        guard access(url.path(percentEncoded: false), F_OK) == 0 else { return false }
        try AtomicFile.remove(at: url)
        return true
    }

    /// Deletes every file under ``directory``, then the directories, then ``directory`` itself.
    ///
    /// - Returns: The names (relative paths) of the files deleted, sorted. Empty, with nothing touched, when
    ///   the directory does not exist.
    public func removeAll() throws -> [String] {
        let root = directory.path(percentEncoded: false)
        guard access(root, F_OK) == 0 else { return [] }
        let manager = FileManager.default
        let entries = try manager.subpathsOfDirectory(atPath: root).sorted()
        var removed: [String] = []
        var directories: [String] = []
        for entry in entries {
            let path = root + (root.hasSuffix("/") ? "" : "/") + entry
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                directories.append(path)
            } else {
                try AtomicFile.remove(at: URL(filePath: path))
                removed.append(entry)
            }
        }
        // Deepest first, so each directory is empty when its turn comes.
        for path in directories.sorted(by: { $0.count > $1.count }) + [root] where rmdir(path) != 0 {
            throw FileStorageError.directoryNotRemoved(path: path, code: errno)
        }
        return removed
    }

    private func url(for name: String) throws(FileStorageError) -> URL {
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !name.isEmpty, !name.hasPrefix("/"),
            components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." })
        else { throw .invalidName(name) }
        return directory.appending(path: name)
    }
}

/// A name that ``FileStorage`` refuses because it would leave its directory, or a directory it could not remove.
///
/// File reads, writes and removals fail with `FileStoreError` (path, operation, system error) instead.
public enum FileStorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name is empty, absolute, or has an empty, `.` or `..` component. The payload is the name found.
    case invalidName(String)
    /// ``FileStorage/removeAll()`` deleted the files but could not remove this directory (`errno` in `code`).
    case directoryNotRemoved(path: String, code: Int32)

    /// What was found and what was expected.
    public var description: String {
        switch self {
        case .invalidName(let name):
            "storage name \"\(name)\" is invalid: expected a relative path without empty, \".\" or \"..\" parts"
        case .directoryNotRemoved(let path, let code):
            "\(path): cannot remove directory: \(String(cString: strerror(code)))"
        }
    }
}

import Foundation

/// A file operation that failed, with the path, what was being done, and what went wrong.
public struct FileStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What the store was doing.
    public enum Operation: String, Sendable, Hashable {
        case open, read, write, sync, rename, remove, list, createDirectory = "create directory", lock
    }

    /// What went wrong.
    public enum Problem: Sendable, Hashable {
        /// The system refused with this `errno` value (permissions, data protection, an I/O error...).
        case system(Int32)
        /// A symbolic link was found where a file or directory was expected. It is never followed.
        case symbolicLink
        /// Something other than a regular file (the payload names it: a FIFO, a directory...) was found where a
        /// file was expected. It is never opened in a way that could block.
        case notRegularFile(found: String)
        /// Something other than a directory (the payload names it) was found where a directory was expected.
        case notDirectory(found: String)
        /// The file is larger than `limit` bytes, the most this reader accepts. Nothing was read.
        case tooLarge(limit: Int)
    }

    /// The path the operation was on.
    public let path: String
    /// What the store was doing.
    public let operation: Operation
    /// What went wrong.
    public let problem: Problem

    /// Creates an error.
    public init(path: String, operation: Operation, problem: Problem) {
        self.path = path
        self.operation = operation
        self.problem = problem
    }

    package init(path: String, operation: Operation, code: Int32) {
        self.init(path: path, operation: operation, problem: .system(code))
    }

    /// The `errno` value closest to ``problem``: the system's own, `ELOOP` for a symbolic link, `EFTYPE`-like
    /// `EINVAL` for a file of the wrong type, `ENOTDIR`, `EFBIG` for a file over its limit.
    public var code: Int32 {
        switch problem {
        case .system(let code): code
        case .symbolicLink: ELOOP
        case .notRegularFile: EINVAL
        case .notDirectory: ENOTDIR
        case .tooLarge: EFBIG
        }
    }

    /// Whether the thing itself is wrong (a link, a FIFO, a file over its limit): waiting will not make it
    /// readable. Otherwise the system refused (permissions, data protection, I/O), which may pass.
    public var isHostileContent: Bool {
        if case .system = problem { return false }
        return true
    }

    /// What went wrong, without the path: `No such file or directory`, `found a FIFO, expected a regular file`.
    public var reason: String {
        switch problem {
        case .system(let code): String(cString: strerror(code))
        case .symbolicLink: "found a symbolic link, which is never followed"
        case .notRegularFile(let found): "found \(found), expected a regular file"
        case .notDirectory(let found): "found \(found), expected a directory"
        case .tooLarge(let limit): "the file is larger than \(limit) bytes, the most accepted here"
        }
    }

    /// `PATH: cannot OPERATION: REASON`, the path escaped.
    public var description: String {
        "\(UntrustedText.escapedPath(path)): cannot \(operation.rawValue): \(reason)"
    }
}

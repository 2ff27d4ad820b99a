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

/// Where a file operation acts: a directory the app named (the anchor) and a relative path below it.
///
/// The anchor's own parents are the app's choice and are resolved as usual; the anchor itself and everything below
/// it are reached without following symbolic links, one `openat` at a time, so nothing under the anchor can send an
/// operation elsewhere.
package struct FileLocation: Sendable, Hashable {
    /// The directory the app named, without trailing slashes.
    package let anchor: String
    /// The path below it, one component each; the last one is the file (or directory) acted on.
    package let components: [String]

    /// The file at `url`; its directory is the anchor.
    package init(file url: URL) {
        let (parent, name) = Self.split(url.path(percentEncoded: false))
        self.init(anchor: parent, components: [name])
    }

    /// The directory at `url` and a relative path inside it; `url`'s parent is the anchor.
    package init(directory url: URL, components: [String] = []) {
        let (parent, name) = Self.split(url.path(percentEncoded: false))
        self.init(anchor: parent, components: [name] + components)
    }

    /// A path below the directory at `url`, which is itself the anchor.
    package init(anchor url: URL, components: [String]) {
        let trimmed = Self.trimmed(url.path(percentEncoded: false))
        self.init(anchor: trimmed.isEmpty ? "." : String(trimmed), components: components)
    }

    package init(anchor: String, components: [String]) {
        self.anchor = anchor
        self.components = components
    }

    /// The whole path, for messages.
    package var path: String {
        ([anchor == "/" ? "" : anchor] + components).joined(separator: "/")
    }

    /// `path` without trailing slashes (a trailing slash would make the kernel follow a link there), `/` kept.
    private static func trimmed(_ path: String) -> Substring {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return trimmed
    }

    private static func split(_ path: String) -> (parent: String, name: String) {
        let trimmed = trimmed(path)
        guard let slash = trimmed.lastIndex(of: "/") else { return (".", String(trimmed)) }
        let parent = trimmed[..<slash]
        return (parent.isEmpty ? "/" : String(parent), String(trimmed[trimmed.index(after: slash)...]))
    }
}

/// What a tree removal deleted and what it could not.
package struct TreeRemoval: Sendable {
    /// The files (and links, FIFOs...) deleted, as paths relative to the tree's root, sorted.
    package var removed: [String] = []
    /// What could not be deleted.
    package var failures: [FileStoreError] = []
}

/// The one place where the package opens, reads, writes and deletes files.
///
/// Every operation is relative to an opened directory (see ``FileLocation``): symbolic links are never followed
/// below the anchor, only regular files are opened (with `O_NONBLOCK`, so a FIFO or a device cannot block, and
/// checked with `fstat` before a byte is read), and every read has a size limit.
///
/// Every operation that writes or deletes takes the anchor directory's inter-process lock first (see
/// ``lockFileName``), so a write, an append, a read-modify-write (``update(_:limit:_:)``) and a removal of temporary
/// files never interleave with another process's. Reads take no lock: a replacement is one `rename`, and a reader of
/// an appended file ignores a last line without its newline.
///
/// Replacements are crash-safe. `FileManager.replaceItemAt` is not used: on Linux it can lose the file. The
/// sequence is the classic one: write a temporary file in the same directory, flush it to the disk (`fsync`; on
/// Darwin `F_FULLFSYNC` or `F_BARRIERFSYNC`, see ``Durability``), `rename` it over the target, flush the directory
/// the same way.
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

    private static let temporaryCounter = AtomicWord<Int>(0)
    /// The longest file name the file systems the package runs on accept, in bytes (`NAME_MAX`).
    package static let maximumNameLength = 255
    private static let temporaryMarker = ".tmp-"

    // MARK: Reading

    /// Reads the whole file at `url`, or returns `nil` when it does not exist. Creates nothing.
    ///
    /// - Throws: ``FileStoreError`` when the file or a directory on the way is a symbolic link or not what was
    ///   expected, is larger than `limit` bytes, or cannot be read.
    package static func read(at url: URL, limit: Int) throws(FileStoreError) -> Data? {
        try read(FileLocation(file: url), limit: limit)
    }

    /// Reads the whole file at `location`, or returns `nil` when it (or a directory on the way) does not exist.
    package static func read(_ location: FileLocation, limit: Int) throws(FileStoreError) -> Data? {
        try withDirectory(location, create: false) { (directory, name, _) throws(FileStoreError) -> Data? in
            guard let directory else { return nil }
            return try readFile(name, in: directory, path: location.path, limit: limit)
        }
    }

    /// Reads the file at `location` in pieces of at most `chunkSize` bytes, handing each to `body`, so the file is
    /// read in bounded memory. Returns `false` (having called `body` never) when the file does not exist.
    ///
    /// - Throws: ``FileStoreError`` as ``read(_:limit:)`` does, also when the file grows past `limit` while read.
    package static func readChunks(
        _ location: FileLocation, limit: Int, chunkSize: Int = 64 * 1024, _ body: (UnsafeRawBufferPointer) -> Void
    ) throws(FileStoreError) -> Bool {
        try withOpenedFile(location, limit: limit) { (file) throws(FileStoreError) -> Bool in
            guard let file else { return false }
            try file.readChunks(from: 0, chunkSize: chunkSize, body)
            return true
        }
    }

    /// Opens the regular file at `location` for reading (no link followed, no blocking, at most `limit` bytes) and
    /// runs `body` with it, or with `nil` when it does not exist. Every read through the ``OpenedFile`` reads the
    /// file that was opened, even if another process replaces it meanwhile. Takes no lock.
    package static func withOpenedFile<Result>(
        _ location: FileLocation, limit: Int, _ body: (OpenedFile?) throws(FileStoreError) -> Result
    ) throws(FileStoreError) -> Result {
        try withDirectory(location, create: false) { (directory, name, _) throws(FileStoreError) -> Result in
            guard let directory, let fd = try openRegularFile(name, in: directory, path: location.path) else {
                return try body(nil)
            }
            defer { close(fd) }
            let size = try requireRegularFile(fd, path: location.path)
            guard size <= limit else {
                throw FileStoreError(path: location.path, operation: .read, problem: .tooLarge(limit: limit))
            }
            return try body(OpenedFile(fd: fd, path: location.path, size: size, limit: limit))
        }
    }

    /// A regular file opened for reading at any offset (`pread`), so that reads never move a shared position.
    package struct OpenedFile {
        fileprivate let fd: Int32
        /// The file's path, for messages.
        package let path: String
        /// Its size when it was opened (or when the append that handed it over had written).
        package let size: Int
        /// The most bytes any read of it accepts.
        fileprivate let limit: Int

        /// The bytes in `range`, fewer when the file ends first.
        package func read(_ range: Range<Int>) throws(FileStoreError) -> Data {
            var data = Data(count: range.count)
            var total = 0
            while total < range.count {
                let count = data.withUnsafeMutableBytes { raw in
                    AtomicFile.retryingOnInterrupt {
                        pread(fd, raw.baseAddress! + total, range.count - total, off_t(range.lowerBound + total))
                    }
                }
                if count < 0 { throw FileStoreError(path: path, operation: .read, code: errno) }
                if count == 0 { break }
                total += count
            }
            return data.prefix(total)
        }

        /// Reads from `offset` to the end of the file (wherever it is by then) in pieces of at most `chunkSize`
        /// bytes, handing each to `body`.
        ///
        /// - Throws: ``FileStoreError`` when a read fails, or when the file grows past the limit while read.
        package func readChunks(
            from offset: Int, chunkSize: Int = 64 * 1024, _ body: (UnsafeRawBufferPointer) -> Void
        ) throws(FileStoreError) {
            var buffer = [UInt8](repeating: 0, count: chunkSize)
            var position = offset
            while true {
                let count = buffer.withUnsafeMutableBytes { raw in
                    AtomicFile.retryingOnInterrupt { pread(fd, raw.baseAddress, raw.count, off_t(position)) }
                }
                if count < 0 { throw FileStoreError(path: path, operation: .read, code: errno) }
                if count == 0 { return }
                position += count
                if position > limit {
                    throw FileStoreError(path: path, operation: .read, problem: .tooLarge(limit: limit))
                }
                buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            }
        }
    }

    /// Reads `name` in `directory` whole (at most `limit` bytes), or returns `nil` when it does not exist.
    private static func readFile(
        _ name: String, in directory: Int32, path: String, limit: Int
    ) throws(FileStoreError) -> Data? {
        guard let fd = try openRegularFile(name, in: directory, path: path) else { return nil }
        defer { close(fd) }
        return try readRegularFile(fd, path: path, limit: limit)
    }

    /// Opens `name` in `directory` for reading, without following a link and without blocking, or returns `nil`
    /// when it does not exist. The caller checks the kind of file before it reads (``requireRegularFile(_:path:)``).
    private static func openRegularFile(
        _ name: String, in directory: Int32, path: String
    ) throws(FileStoreError) -> Int32? {
        guard let kind = try kind(of: name, in: directory, path: path) else { return nil }
        if kind == S_IFLNK { throw FileStoreError(path: path, operation: .open, problem: .symbolicLink) }
        let fd = retryingOnInterrupt { openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw error(path: path, operation: .open, errno: errno, at: name, in: directory)
        }
        return fd
    }

    /// Throws unless `fd` is a regular file; returns its size.
    private static func requireRegularFile(_ fd: Int32, path: String) throws(FileStoreError) -> Int {
        var status = stat()
        if fstat(fd, &status) != 0 { throw FileStoreError(path: path, operation: .read, code: errno) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw FileStoreError(path: path, operation: .open, problem: .notRegularFile(found: describe(status)))
        }
        return Int(status.st_size)
    }

    /// Reads a file a person named on a command line: symbolic links are followed (the person chose the path),
    /// but only a regular file is read (a FIFO or a device is refused without blocking), at most `limit` bytes.
    package static func readNamedFile(atPath path: String, limit: Int) throws(FileStoreError) -> Data {
        let fd = retryingOnInterrupt { open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        if fd < 0 { throw FileStoreError(path: path, operation: .open, code: errno) }
        defer { close(fd) }
        return try readRegularFile(fd, path: path, limit: limit)
    }

    /// Checks that `fd` is a regular file of at most `limit` bytes, then reads it, never more than `limit + 1`
    /// bytes (the file may grow while it is read).
    private static func readRegularFile(_ fd: Int32, path: String, limit: Int) throws(FileStoreError) -> Data {
        guard try requireRegularFile(fd, path: path) <= limit else {
            throw FileStoreError(path: path, operation: .read, problem: .tooLarge(limit: limit))
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: min(64 * 1024, limit + 1))
        while true {
            let wanted = min(buffer.count, limit + 1 - data.count)
            let count = buffer.withUnsafeMutableBytes { raw in
                retryingOnInterrupt { Glue.read(fd, raw.baseAddress, wanted) }
            }
            if count < 0 { throw FileStoreError(path: path, operation: .read, code: errno) }
            if count == 0 { return data }
            data.append(contentsOf: buffer[0..<count])
            if data.count > limit {
                throw FileStoreError(path: path, operation: .read, problem: .tooLarge(limit: limit))
            }
        }
    }

    // MARK: Writing

    /// Replaces the file's contents with `data` so that a crash leaves either the old or the new contents.
    ///
    /// Missing directories are created (owner-only) only if the first attempt finds them missing. The file is
    /// created readable and writable by its owner only. Whatever is at the target (a symbolic link included) is
    /// replaced, never written through; a directory there is an error.
    package static func write(_ data: Data, to url: URL, durability: Durability = .full) throws(FileStoreError) {
        try write(data, to: FileLocation(file: url), durability: durability)
    }

    /// Replaces the file at `location` with `data`; see `write(_:to:durability:)`.
    package static func write(
        _ data: Data, to location: FileLocation, durability: Durability = .full
    ) throws(FileStoreError) {
        try withDirectory(location, create: true) { (directory, name, lock) throws(FileStoreError) in
            guard let directory else { return }
            try lock.acquire()
            try replaceFile(name, in: directory, location: location, with: data, durability: durability)
        }
    }

    /// Reads the file at `location` (`nil` when it does not exist) and replaces it with what `transform` makes of
    /// it, or leaves it as it is when `transform` returns `nil`, all under the directory's lock and re-reading under
    /// it: no other process's change made in between is lost, since there is no in between.
    ///
    /// A file that is there but unusable (a link, a FIFO, one over `limit` bytes) reads as `nil`: `transform`
    /// decides what replaces it, never writing through it. `transform` runs with the lock held: it must only
    /// compute (no waiting, no callback, no suspension).
    ///
    /// `durability` chooses, from the contents read and the replacement, how far the write must reach (see
    /// ``Durability``); `full` unless told.
    ///
    /// - Throws: ``FileStoreError`` when the system refuses the read (then `transform` is not called and nothing is
    ///   written: the file may hold what must not be lost), or the write.
    package static func update(
        _ location: FileLocation, limit: Int, durability: (Data?, Data) -> Durability = { _, _ in .full },
        _ transform: (Data?) -> Data?
    ) throws(FileStoreError) {
        try withDirectory(location, create: true) { (directory, name, lock) throws(FileStoreError) in
            guard let directory else { return }
            try lock.acquire()
            let current: Data?
            do throws(FileStoreError) {
                current = try readFile(name, in: directory, path: location.path, limit: limit)
            } catch  where error.isHostileContent {
                current = nil
            }
            guard let replacement = transform(current) else { return }
            try replaceFile(
                name, in: directory, location: location, with: replacement,
                durability: durability(current, replacement))
        }
    }

    /// Writes `data` to a temporary file beside `name`, flushes it and renames it over `name`. Called under the lock.
    private static func replaceFile(
        _ name: String, in directory: Int32, location: FileLocation, with data: Data, durability: Durability
    ) throws(FileStoreError) {
        let temporary = temporaryName(for: name)
        let temporaryPath = FileLocation(
            anchor: location.anchor, components: location.components.dropLast() + [temporary]
        ).path
        var fd = retryingOnInterrupt {
            openat(directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
        if fd < 0 { throw FileStoreError(path: temporaryPath, operation: .open, code: errno) }
        do throws(FileStoreError) {
            if let writeError = writeAll(data, to: fd) {
                throw FileStoreError(path: temporaryPath, operation: .write, code: writeError)
            }
            if flushToDisk(fd, durability) != 0 {
                throw FileStoreError(path: temporaryPath, operation: .sync, code: errno)
            }
            close(fd)
            fd = -1
            if renameat(directory, temporary, directory, name) != 0 {
                throw FileStoreError(path: location.path, operation: .rename, code: errno)
            }
        } catch {
            if fd >= 0 { close(fd) }
            unlinkat(directory, temporary, 0)
            throw error
        }
        _ = flushToDisk(directory, durability)
    }

    /// Appends `line` (ending in a newline) to the file at `location`, creating it (owner-only) if needed: under
    /// the directory's lock, one `O_APPEND` write, then a flush to the disk. Only the end of the file is read, so
    /// the file's size costs nothing.
    ///
    /// A last line without its newline is an append a crash cut short (an acknowledged append was flushed whole).
    /// It is repaired first: removed when `isCutShort` says it is the start of a line that was never finished (it is
    /// given at most `maximumLineLength` bytes), ended with a newline otherwise, so the new line starts a line of its
    /// own and nothing whole is lost.
    ///
    /// `afterwards` runs once the line is flushed, still under the lock, with the file as it now is and its
    /// directory (see ``AppendedFile``); it must only compute and touch the files beside this one.
    package static func appendLine(
        _ line: Data, to location: FileLocation, maximumLineLength: Int, isCutShort: (Data) -> Bool,
        afterwards: (AppendedFile) -> Void = { _ in }
    ) throws(FileStoreError) {
        try withDirectory(location, create: true) { (directory, name, lock) throws(FileStoreError) in
            guard let directory else { return }
            try lock.acquire()
            let path = location.path
            if try kind(of: name, in: directory, path: path) == S_IFLNK {
                throw FileStoreError(path: path, operation: .open, problem: .symbolicLink)
            }
            let flags = O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
            let fd = retryingOnInterrupt { openat(directory, name, flags, 0o600) }
            if fd < 0 { throw error(path: path, operation: .open, errno: errno, at: name, in: directory) }
            defer { close(fd) }
            let size = try requireRegularFile(fd, path: path)
            var bytes = Data()
            var end = size
            if size > 0 {
                // The last line, if it has no newline: at most maximumLineLength + 1 bytes are looked at.
                let tailLength = min(size, maximumLineLength + 1)
                var tail = [UInt8](repeating: 0, count: tailLength)
                let count = tail.withUnsafeMutableBytes { raw in
                    retryingOnInterrupt { pread(fd, raw.baseAddress, tailLength, off_t(size - tailLength)) }
                }
                if count != tailLength { throw FileStoreError(path: path, operation: .read, code: errno) }
                if tail.last != UInt8(ascii: "\n") {
                    let newline = tail.lastIndex(of: UInt8(ascii: "\n"))
                    let start = newline.map { $0 + 1 } ?? (tailLength == size ? 0 : nil)
                    if let start, isCutShort(Data(tail[start...])) {
                        end = size - tailLength + start
                        if ftruncate(fd, off_t(end)) != 0 {
                            throw FileStoreError(path: path, operation: .write, code: errno)
                        }
                    } else {
                        bytes.append(UInt8(ascii: "\n"))
                    }
                }
            }
            bytes.append(line)
            if let writeError = writeAll(bytes, to: fd) {
                throw FileStoreError(path: path, operation: .write, code: writeError)
            }
            if flushToDisk(fd, .full) != 0 { throw FileStoreError(path: path, operation: .sync, code: errno) }
            // A new file's name is durable only once its directory is flushed.
            if size == 0 { flushDirectory(directory) }
            afterwards(
                AppendedFile(
                    file: OpenedFile(fd: fd, path: path, size: end + bytes.count, limit: Int.max),
                    directory: directory, location: location))
        }
    }

    /// A file just appended to, and its directory, handed to `appendLine`'s `afterwards` under the lock: for a
    /// companion file (a checkpoint of what the appended file holds) kept in step with it.
    package struct AppendedFile {
        /// The appended file; its ``OpenedFile/size`` is where the appended line ends.
        package let file: OpenedFile
        fileprivate let directory: Int32
        fileprivate let location: FileLocation

        /// The contents of `name` beside the appended file, or `nil` when it does not exist or cannot be used (a
        /// link, not a regular file, larger than `limit`, unreadable).
        package func readSibling(_ name: String, limit: Int) -> Data? {
            try? AtomicFile.readFile(name, in: directory, path: sibling(name).path, limit: limit)
        }

        /// Replaces `name` beside the appended file with `data`, as ``write(_:to:durability:)`` does.
        package func replaceSibling(
            _ name: String, with data: Data, durability: Durability
        ) throws(FileStoreError) {
            try AtomicFile.replaceFile(name, in: directory, location: sibling(name), with: data, durability: durability)
        }

        private func sibling(_ name: String) -> FileLocation {
            FileLocation(anchor: location.anchor, components: location.components.dropLast() + [name])
        }
    }

    /// The name of a temporary file for `name`: `.NAME.tmp-PID-N`, with `NAME` cut (at a character boundary) so the
    /// whole stays within ``maximumNameLength`` bytes whatever `name` is.
    package static func temporaryName(for name: String) -> String {
        let suffix = "\(temporaryMarker)\(getpid())-\(temporaryCounter.add(1, ordering: .relaxed).newValue)"
        let budget = maximumNameLength - 1 - suffix.utf8.count
        if name.utf8.count <= budget { return "." + name + suffix }
        var kept = ""
        var used = 0
        for scalar in name.unicodeScalars {
            let size = scalar.utf8.count
            if used + size > budget { break }
            kept.unicodeScalars.append(scalar)
            used += size
        }
        return "." + kept + suffix
    }

    /// Whether `name` is a temporary file of `write(_:to:durability:)`: `.NAME.tmp-PID-N`.
    package static func isTemporaryName(_ name: String) -> Bool {
        guard name.hasPrefix("."), let marker = name.range(of: temporaryMarker, options: .backwards) else {
            return false
        }
        let numbers = name[marker.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
        return numbers.count == 2
            && numbers.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
    }

    // MARK: Removing

    /// Deletes the file at `url`. A file that does not exist is not an error; a symbolic link is deleted itself.
    package static func remove(at url: URL) throws(FileStoreError) {
        _ = try remove(FileLocation(file: url))
    }

    /// Deletes the entry at `location` (a file, or a link itself); returns whether there was one.
    ///
    /// - Throws: ``FileStoreError`` when it cannot be deleted (a directory there cannot).
    @discardableResult
    package static func remove(_ location: FileLocation) throws(FileStoreError) -> Bool {
        try withDirectory(location, create: false) { (directory, name, lock) throws(FileStoreError) -> Bool in
            guard let directory else { return false }
            // The lock (and its file) only when there is something to delete.
            guard try kind(of: name, in: directory, path: location.path) != nil else { return false }
            try lock.acquire()
            if unlinkat(directory, name, 0) != 0 {
                if errno == ENOENT { return false }
                throw error(path: location.path, operation: .remove, errno: errno, at: name, in: directory)
            }
            flushDirectory(directory)
            return true
        }
    }

    /// Deletes the directory at `location` with everything in it, without following any symbolic link: a link
    /// is deleted itself, never what it points to. A link where the directory should be is deleted and reported.
    ///
    /// It does not stop at the first failure: everything that can be deleted is, and each thing that cannot is
    /// reported. Nothing is created; a directory that does not exist yields an empty result.
    package static func removeTree(_ location: FileLocation) -> TreeRemoval {
        var result = TreeRemoval()
        do throws(FileStoreError) {
            try withDirectory(location, create: false) { (parent, name, lock) throws(FileStoreError) in
                guard let parent else { return }
                let path = location.path
                guard try kind(of: name, in: parent, path: path) != nil else { return }
                try lock.acquire()
                // Looked at again under the lock: another process may have removed it meanwhile.
                guard let kind = try kind(of: name, in: parent, path: path) else { return }
                if kind != S_IFDIR {
                    // A link or anything else where the directory should be: delete the entry itself.
                    if unlinkat(parent, name, 0) != 0 && errno != ENOENT {
                        throw FileStoreError(path: path, operation: .remove, code: errno)
                    }
                    result.removed.append(path)
                    return
                }
                removeContents(of: name, in: parent, path: path, relative: "", into: &result)
                if unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOENT {
                    result.failures.append(FileStoreError(path: path, operation: .remove, code: errno))
                }
                flushDirectory(parent)
            }
        } catch {
            result.failures.append(error)
        }
        result.removed.sort()
        return result
    }

    /// Deletes the temporary files that interrupted writes left in the directory at `url` (not below it).
    ///
    /// It runs under the directory's lock, so a write in progress in another process (which holds the lock from
    /// creating its temporary file to renaming it) is never broken: only a write that can no longer finish left
    /// what is removed. The lock is taken, and its file created, only when there is something to remove.
    package static func removeTemporaries(in url: URL) -> TreeRemoval {
        var result = TreeRemoval()
        // The directory is the anchor, as it is for the files in it.
        let location = FileLocation(anchor: url, components: ["."])
        do throws(FileStoreError) {
            try withDirectory(location, create: false) { (directory, _, lock) throws(FileStoreError) in
                guard let directory else { return }
                guard try entries(of: directory, path: location.anchor).contains(where: isTemporaryName) else { return }
                try lock.acquire()
                // Listed again under the lock: what was listed before may have been a write in flight.
                for entry in try entries(of: directory, path: location.anchor) where isTemporaryName(entry) {
                    if unlinkat(directory, entry, 0) == 0 {
                        result.removed.append(entry)
                    } else if errno != ENOENT {
                        result.failures.append(
                            FileStoreError(path: location.anchor + "/" + entry, operation: .remove, code: errno))
                    }
                }
                if !result.removed.isEmpty { flushDirectory(directory) }
            }
        } catch {
            result.failures.append(error)
        }
        result.removed.sort()
        return result
    }

    private static func removeContents(
        of name: String, in parent: Int32, path: String, relative: String, into result: inout TreeRemoval
    ) {
        var fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 && errno == EACCES {
            // A folder of ours made unreadable: make it readable again, so what it holds can go too.
            if fchmodat(parent, name, 0o700, AT_SYMLINK_NOFOLLOW) == 0 {
                fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
        }
        guard fd >= 0 else {
            result.failures.append(FileStoreError(path: path, operation: .open, code: errno))
            return
        }
        defer { close(fd) }
        let names: [String]
        do { names = try entries(of: fd, path: path) } catch {
            result.failures.append(error)
            return
        }
        for entry in names {
            let entryPath = path + "/" + entry
            let entryRelative = relative.isEmpty ? entry : relative + "/" + entry
            var status = stat()
            guard fstatat(fd, entry, &status, AT_SYMLINK_NOFOLLOW) == 0 else {
                if errno != ENOENT {
                    result.failures.append(FileStoreError(path: entryPath, operation: .remove, code: errno))
                }
                continue
            }
            if status.st_mode & S_IFMT == S_IFDIR {
                removeContents(of: entry, in: fd, path: entryPath, relative: entryRelative, into: &result)
                if unlinkat(fd, entry, AT_REMOVEDIR) != 0 && errno != ENOENT {
                    result.failures.append(FileStoreError(path: entryPath, operation: .remove, code: errno))
                }
            } else if unlinkat(fd, entry, 0) == 0 {
                result.removed.append(entryRelative)
            } else if errno != ENOENT {
                result.failures.append(FileStoreError(path: entryPath, operation: .remove, code: errno))
            }
        }
        flushDirectory(fd)
    }

    /// The names in the directory `fd` (without `.` and `..`). `fd` stays open and is not moved.
    private static func entries(of fd: Int32, path: String) throws(FileStoreError) -> [String] {
        let copy = dup(fd)
        guard copy >= 0, let stream = fdopendir(copy) else {
            let code = errno
            throw FileStoreError(path: path, operation: .list, code: code)
        }
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
    }

    // MARK: The directory walk

    /// Opens `location`'s anchor and every directory below it but the last component, without following symbolic
    /// links, and runs `body` with the innermost directory's descriptor and the last component's name, or with
    /// `nil` when a directory on the way does not exist and `create` is false. `body` also gets the anchor's
    /// ``DirectoryLock``, which it takes before it writes or deletes; it is released when `body` returns.
    ///
    /// Every operation of this type goes through here.
    private static func withDirectory<Result>(
        _ location: FileLocation,
        create: Bool,
        _ body: (Int32?, String, DirectoryLock) throws(FileStoreError) -> Result
    ) throws(FileStoreError) -> Result {
        precondition(!location.components.isEmpty, "a file location names something below its anchor")
        let name = location.components[location.components.count - 1]
        var anchor = openDirectory(atPath: location.anchor)
        if anchor < 0 && errno == ENOENT && create {
            try createDirectory(location.anchor)
            anchor = openDirectory(atPath: location.anchor)
        }
        if anchor < 0 {
            if errno == ENOENT && !create { return try body(nil, name, DirectoryLock(anchor: -1, path: "")) }
            throw directoryError(path: location.anchor, errno: errno)
        }
        // The anchor stays open until the end: the lock is taken on a file in it.
        let lock = DirectoryLock(anchor: anchor, path: location.anchor)
        var fd = anchor
        defer {
            if fd != anchor { close(fd) }
            lock.release()
            close(anchor)
        }
        // A write below a subdirectory takes the lock before opening it: another process's purge (``removeTree(_:)``)
        // could otherwise delete it between its opening and the write, which would then fail.
        if create && location.components.count > 1 { try lock.acquire() }
        var path = location.anchor
        for component in location.components.dropLast() {
            path += (path.hasSuffix("/") ? "" : "/") + component
            var next = openat(fd, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if next < 0 && errno == ENOENT && create {
                if mkdirat(fd, component, 0o700) != 0 && errno != EEXIST {
                    throw FileStoreError(path: path, operation: .createDirectory, code: errno)
                }
                next = openat(fd, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            if next < 0 {
                let code = errno
                if code == ENOENT && !create { return try body(nil, name, lock) }
                throw error(path: path, operation: .open, errno: code, at: component, in: fd, directory: true)
            }
            if fd != anchor { close(fd) }
            fd = next
        }
        return try body(fd, name, lock)
    }

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
        private let anchor: Int32
        private let path: String
        private var fd: Int32 = -1

        init(anchor: Int32, path: String) {
            self.anchor = anchor
            self.path = path
        }

        /// Takes the lock, waiting for another holder to release it as long as ``AtomicFile/lockWait`` allows (past
        /// it: `EWOULDBLOCK`, see ``AtomicFile/isLockBusy(_:)``); does nothing when already taken.
        ///
        /// Something other than a regular file at the lock's name (a link, a FIFO) is deleted and replaced: it
        /// cannot be anyone's lock, and leaving it would block every write.
        package func acquire() throws(FileStoreError) {
            guard fd < 0, AtomicFile.heldLockPath != path else { return }  // (Taken already, by `withLock(of:)`.)
            let lockPath = (path.hasSuffix("/") ? path : path + "/") + lockFileName
            var descriptor: Int32 = -1
            for attempt in 0..<2 {
                descriptor = retryingOnInterrupt {
                    openat(anchor, lockFileName, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
                }
                var status = stat()
                if descriptor >= 0 && fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFREG { break }
                let code = descriptor < 0 ? errno : EINVAL
                if descriptor >= 0 { close(descriptor) }
                descriptor = -1
                var found = stat()
                let isForeign =
                    fstatat(anchor, lockFileName, &found, AT_SYMLINK_NOFOLLOW) == 0 && found.st_mode & S_IFMT != S_IFREG
                    && found.st_mode & S_IFMT != S_IFDIR
                guard attempt == 0, isForeign, unlinkat(anchor, lockFileName, 0) == 0 else {
                    throw AtomicFile.error(path: lockPath, operation: .lock, errno: code, at: lockFileName, in: anchor)
                }
            }
            if AtomicFile.lockExclusively(descriptor) != 0 {  // As long as `lockWait` allows.
                let code = errno
                close(descriptor)
                throw FileStoreError(path: lockPath, operation: .lock, code: code)
            }
            fd = descriptor
        }

        /// Releases the lock if it was taken.
        func release() {
            guard fd >= 0 else { return }
            close(fd)  // Closing the only descriptor of the open file releases the flock.
            fd = -1
        }
    }

    private static func openDirectory(atPath path: String) -> Int32 {
        retryingOnInterrupt { open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
    }

    /// The file type of `name` in `directory` (`S_IFREG`...), or `nil` when there is nothing there.
    private static func kind(of name: String, in directory: Int32, path: String) throws(FileStoreError) -> mode_t? {
        var status = stat()
        if fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW) != 0 {
            if errno == ENOENT { return nil }
            throw FileStoreError(path: path, operation: .open, code: errno)
        }
        return status.st_mode & S_IFMT
    }

    /// The error for a failed `openat`/`unlinkat`, naming a link or a wrong kind of file when that was the cause.
    ///
    /// Opening a socket fails with `ENXIO` on Linux and `EOPNOTSUPP` on Darwin: both are looked at, so a socket
    /// planted where a file should be reads as hostile content on every platform, not as a temporary refusal.
    package static func error(
        path: String, operation: FileStoreError.Operation, errno code: Int32, at name: String, in directory: Int32,
        directory expectDirectory: Bool = false
    ) -> FileStoreError {
        var status = stat()
        if [ELOOP, ENOTDIR, EISDIR, EMLINK, ENXIO, EOPNOTSUPP].contains(code),
            fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW) == 0
        {
            let type = status.st_mode & S_IFMT
            if type == S_IFLNK { return FileStoreError(path: path, operation: operation, problem: .symbolicLink) }
            if expectDirectory && type != S_IFDIR {
                return FileStoreError(path: path, operation: operation, problem: .notDirectory(found: describe(status)))
            }
            if !expectDirectory && type != S_IFREG {
                return FileStoreError(
                    path: path, operation: operation, problem: .notRegularFile(found: describe(status)))
            }
        }
        return FileStoreError(path: path, operation: operation, code: code)
    }

    /// The error for an anchor that could not be opened, naming a link or a wrong kind of file when that was the cause.
    private static func directoryError(path: String, errno code: Int32) -> FileStoreError {
        var status = stat()
        if [ELOOP, ENOTDIR, EMLINK].contains(code), lstat(path, &status) == 0 {
            if status.st_mode & S_IFMT == S_IFLNK {
                return FileStoreError(path: path, operation: .open, problem: .symbolicLink)
            }
            return FileStoreError(path: path, operation: .open, problem: .notDirectory(found: describe(status)))
        }
        return FileStoreError(path: path, operation: .open, code: code)
    }

    /// `a directory`, `a FIFO`... for messages.
    private static func describe(_ status: stat) -> String {
        switch status.st_mode & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a directory"
        case S_IFLNK: "a symbolic link"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        default: "a file of unknown type"
        }
    }

    /// Creates `path` and any missing parents, owner-only, with `mkdir(2)`, so a failure reports the `errno` of
    /// the very call that failed (a `FileManager` call leaves `errno` stale or unset) and the directory it was for.
    /// It tries `path` first and walks up only while a parent is missing, so it never touches directories above
    /// the first one that exists (which a sandbox may hide).
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

    /// Flushes the file's data to the disk. On Darwin `fsync` only hands it to the drive, which may keep it in a
    /// volatile cache; `F_FULLFSYNC` asks the drive to write it through. Where the file system does not support
    /// that, `fsync` is the best there is.
    private static func flushToDisk(_ fd: Int32, _ durability: Durability) -> Int32 {
        #if canImport(Darwin)
        if fcntl(fd, durability == .full ? F_FULLFSYNC : F_BARRIERFSYNC) == 0 { return 0 }
        #endif
        return fsync(fd)
    }

    /// Flushes a directory after its entries changed (a file created, files removed), with ``Durability/full``: what
    /// changes a directory here is a take-away (a revocation's or a reset's deletions) or the ledger's creation,
    /// which must survive a power loss, so on Darwin it is `F_FULLFSYNC`, not `fsync` (which leaves the change in
    /// the drive's cache). Failures are ignored, as they were for `fsync`: the change itself is done.
    private static func flushDirectory(_ fd: Int32) {
        _ = flushToDisk(fd, .full)
    }

    /// Writes all of `data` to `fd`; returns the `errno` of a failed write.
    private static func writeAll(_ data: Data, to fd: Int32) -> Int32? {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = retryingOnInterrupt { Glue.write(fd, raw.baseAddress! + offset, raw.count - offset) }
                if written < 0 { return errno }
                offset += written
            }
            return nil
        }
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

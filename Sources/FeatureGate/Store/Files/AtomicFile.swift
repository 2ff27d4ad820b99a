import Foundation

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
/// the same way; a replacement whose loss a start repairs leaves its rename to the directory's next flush
/// (``Durability/dataOnly``), and only a cache checked before use is written unflushed (``Durability/unflushed``).
package enum AtomicFile {
    // MARK: The directory walk

    /// Opens `location`'s anchor and every directory below it but the last component, without following symbolic
    /// links, and runs `body` with the innermost directory's descriptor and the last component's name, or with
    /// `nil` when a directory on the way does not exist and `create` is false. `body` also gets the anchor's
    /// ``DirectoryLock``, which it takes before it writes or deletes; it is released when `body` returns.
    ///
    /// Every operation of this type that writes or deletes goes through here; reads go through
    /// ``withDirectory(reading:_:)``.
    @inline(__always)
    static func withDirectory<Result>(
        _ location: FileLocation,
        create: Bool,
        _ body: (Int32?, String, DirectoryLock) throws(FileStoreError) -> Result
    ) throws(FileStoreError) -> Result {
        // The walk is out of line, in two functions that take no closure and are not generic: as a generic taking
        // `body`, the optimizer copied it for every caller (14 copies, about 30 KB of the binary). The lock is made and
        // taken here, in the caller's frame, where it stays on the stack: handed to or returned by an out-of-line
        // walk, it was allocated on the heap for every call.
        let anchor = try openAnchor(location, create: create)
        // The anchor stays open until the end: the lock is taken on a file in it.
        let lock = DirectoryLock(anchor: anchor, path: anchor < 0 ? "" : location.anchor)
        defer {
            lock.release()
            closeAnchor(anchor)
        }
        // A write below a subdirectory takes the lock before opening it: another process's purge (``removeTree(_:)``)
        // could otherwise delete it between its opening and the write, which would then fail.
        if create && location.components.count > 1 { try lock.acquire() }
        let opened = try openDirectories(below: anchor, location, create: create)
        defer { opened.close() }
        return try body(opened.directory, opened.name, lock)
    }

    /// ``withDirectory(_:create:_:)`` for a read: creates nothing and has no lock to hand `body` (a read takes none).
    @inline(__always)
    static func withDirectory<Result>(
        reading location: FileLocation,
        _ body: (Int32?, String) throws(FileStoreError) -> Result
    ) throws(FileStoreError) -> Result {
        let anchor = try openAnchor(location, create: false)
        defer { closeAnchor(anchor) }
        let opened = try openDirectories(below: anchor, location, create: false)
        defer { opened.close() }
        return try body(opened.directory, opened.name)
    }

    /// What the walk of ``withDirectory(_:create:_:)`` opened below the anchor: what it hands `body`, and what it
    /// closes after.
    struct OpenedDirectories {
        /// The innermost directory, or `nil` when a directory on the way does not exist (and `create` is false).
        let directory: Int32?
        /// The last component's name.
        let name: String
        /// The anchor's descriptor (`-1` when it does not exist).
        let anchor: Int32
        /// The last directory opened below the anchor, or the anchor.
        let last: Int32

        /// Closes the last directory opened below the anchor (the anchor is closed by ``closeAnchor(_:)``).
        @inline(never)
        func close() {
            if last != anchor { _ = FileSystem.active.close(last) }
        }
    }

    /// The first step of the walk of ``withDirectory(_:create:_:)``: opens `location`'s anchor (creating it when
    /// `create` is true), or returns `-1` when it does not exist and `create` is false.
    @inline(never)
    private static func openAnchor(_ location: FileLocation, create: Bool) throws(FileStoreError) -> Int32 {
        precondition(!location.components.isEmpty, "a file location names something below its anchor")
        var anchor = openDirectory(atPath: location.anchor)
        if anchor < 0 && errno == ENOENT && create {
            try createDirectory(location.anchor)
            anchor = openDirectory(atPath: location.anchor)
        }
        if anchor < 0 {
            if errno == ENOENT && !create { return -1 }
            throw directoryError(path: location.anchor, errno: errno)
        }
        return anchor
    }

    /// Closes the anchor ``openAnchor(_:create:)`` opened, if it did.
    @inline(never)
    private static func closeAnchor(_ anchor: Int32) {
        if anchor >= 0 { _ = FileSystem.active.close(anchor) }
    }

    /// The rest of the walk of ``withDirectory(_:create:_:)``: opens the directories below `anchor` (creating them
    /// when `create` is true) and returns what it opened; on a throw, it has closed what it opened.
    @inline(never)
    private static func openDirectories(
        below anchor: Int32, _ location: FileLocation, create: Bool
    ) throws(FileStoreError) -> OpenedDirectories {
        let name = location.components[location.components.count - 1]
        guard anchor >= 0 else { return OpenedDirectories(directory: nil, name: name, anchor: -1, last: -1) }
        let fs = FileSystem.active
        var fd = anchor
        var handedOver = false
        defer { if !handedOver && fd != anchor { _ = fs.close(fd) } }
        var path = location.anchor
        for component in location.components.dropLast() {
            path += (path.hasSuffix("/") ? "" : "/") + component
            var next = fs.openat(fd, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
            if next < 0 && errno == ENOENT && create {
                if fs.mkdirat(fd, component, 0o700) != 0 && errno != EEXIST {
                    throw FileStoreError(path: path, operation: .createDirectory, code: errno)
                }
                next = fs.openat(fd, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
            }
            if next < 0 {
                let code = errno
                if code == ENOENT && !create {
                    handedOver = true
                    return OpenedDirectories(directory: nil, name: name, anchor: anchor, last: fd)
                }
                throw error(path: path, operation: .open, errno: code, at: component, in: fd, directory: true)
            }
            if fd != anchor { _ = fs.close(fd) }
            fd = next
        }
        handedOver = true
        return OpenedDirectories(directory: fd, name: name, anchor: anchor, last: fd)
    }

    private static func openDirectory(atPath path: String) -> Int32 {
        retryingOnInterrupt { FileSystem.active.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0) }
    }

    /// The file type of `name` in `directory` (`S_IFREG`...), or `nil` when there is nothing there.
    static func kind(of name: String, in directory: Int32, path: String) throws(FileStoreError) -> mode_t? {
        var status = stat()
        if FileSystem.active.fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW) != 0 {
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
            FileSystem.active.fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW) == 0
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
        if [ELOOP, ENOTDIR, EMLINK].contains(code), FileSystem.active.lstat(path, &status) == 0 {
            if status.st_mode & S_IFMT == S_IFLNK {
                return FileStoreError(path: path, operation: .open, problem: .symbolicLink)
            }
            return FileStoreError(path: path, operation: .open, problem: .notDirectory(found: describe(status)))
        }
        return FileStoreError(path: path, operation: .open, code: code)
    }

    /// `a directory`, `a FIFO`... for messages.
    static func describe(_ status: stat) -> String {
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
    static func createDirectory(_ path: String) throws(FileStoreError) {
        if FileSystem.active.mkdir(path, 0o700) == 0 { return }
        let code = errno
        if code == EEXIST { return }
        guard code == ENOENT, let slash = path.lastIndex(of: "/"), slash != path.startIndex else {
            throw FileStoreError(path: path, operation: .createDirectory, code: code)
        }
        try createDirectory(String(path[..<slash]))
        if FileSystem.active.mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw FileStoreError(path: path, operation: .createDirectory, code: errno)
        }
    }

    static func retryingOnInterrupt<T: BinaryInteger>(_ body: () -> T) -> T {
        while true {
            let result = body()
            if result >= 0 || errno != EINTR { return result }
        }
    }
}

import Foundation

extension AtomicFile {
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
        let fs = FileSystem.active
        var fd = retryingOnInterrupt {
            fs.openat(directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
        if fd < 0 { throw FileStoreError(path: temporaryPath, operation: .open, code: errno) }
        do throws(FileStoreError) {
            if let writeError = writeAll(data, to: fd) {
                throw FileStoreError(path: temporaryPath, operation: .write, code: writeError)
            }
            let dataFlush: Durability = durability == .dataOnly ? .full : durability
            if durability != .unflushed && flushToDisk(fd, dataFlush) != 0 {
                throw FileStoreError(path: temporaryPath, operation: .sync, code: errno)
            }
            _ = fs.close(fd)
            fd = -1
            if fs.renameat(directory, temporary, directory, name) != 0 {
                throw FileStoreError(path: location.path, operation: .rename, code: errno)
            }
        } catch {
            if fd >= 0 { _ = fs.close(fd) }
            _ = fs.unlinkat(directory, temporary, 0)
            throw error
        }
        // The rename reaches the disk with the directory's flush; left to the next one for a cache (its loss is a
        // miss) and for a content committed elsewhere first (its loss is repaired from there).
        if durability != .unflushed && durability != .dataOnly { flushDirectory(directory, durability) }
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
    static func appendLine(
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
            let fs = FileSystem.active
            let fd = retryingOnInterrupt { fs.openat(directory, name, flags, 0o600) }
            if fd < 0 { throw error(path: path, operation: .open, errno: errno, at: name, in: directory) }
            defer { _ = fs.close(fd) }
            let size = try requireRegularFile(fd, path: path)
            var bytes = Data()
            var end = size
            if size > 0 {
                // The last line, if it has no newline: at most maximumLineLength + 1 bytes are looked at.
                let tailLength = min(size, maximumLineLength + 1)
                var tail = [UInt8](repeating: 0, count: tailLength)
                let count = tail.withUnsafeMutableBytes { raw in
                    retryingOnInterrupt { fs.pread(fd, raw.baseAddress, tailLength, size - tailLength) }
                }
                if count != tailLength { throw FileStoreError(path: path, operation: .read, code: errno) }
                if tail.last != UInt8(ascii: "\n") {
                    let newline = tail.lastIndex(of: UInt8(ascii: "\n"))
                    let start = newline.map { $0 + 1 } ?? (tailLength == size ? 0 : nil)
                    if let start, isCutShort(Data(tail[start...])) {
                        end = size - tailLength + start
                        if fs.truncate(fd, end) != 0 {
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

    private static let temporaryCounter = AtomicWord<Int>(0)
    /// The longest file name the file systems the package runs on accept, in bytes (`NAME_MAX`).
    package static let maximumNameLength = 255
    private static let temporaryMarker = ".tmp-"

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

    /// Writes all of `data` to `fd`; returns the `errno` of a failed write.
    static func writeAll(_ data: Data, to fd: Int32) -> Int32? {
        let fs = FileSystem.active
        return data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = retryingOnInterrupt { fs.write(fd, raw.baseAddress! + offset, raw.count - offset) }
                if written < 0 { return errno }
                offset += written
            }
            return nil
        }
    }
}

import Foundation

extension AtomicFile {
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
        try withDirectory(reading: location) { (directory, name) throws(FileStoreError) -> Data? in
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
        try withDirectory(reading: location) { (directory, name) throws(FileStoreError) -> Result in
            guard let directory else { return try body(nil) }
            let path = location.path
            guard let fd = try openRegularFile(name, in: directory, path: path) else { return try body(nil) }
            defer { _ = FileSystem.active.close(fd) }
            let size = try requireRegularFile(fd, path: path)
            guard size <= limit else {
                throw FileStoreError(path: path, operation: .read, problem: .tooLarge(limit: limit))
            }
            return try body(OpenedFile(fd: fd, path: path, size: size, limit: limit))
        }
    }

    /// A regular file opened for reading at any offset (`pread`), so that reads never move a shared position.
    package struct OpenedFile {
        let fd: Int32
        /// The file's path, for messages.
        package let path: String
        /// Its size when it was opened (or when the append that handed it over had written).
        package let size: Int
        /// The most bytes any read of it accepts.
        let limit: Int

        /// The bytes in `range`, fewer when the file ends first.
        package func read(_ range: Range<Int>) throws(FileStoreError) -> Data {
            var data = Data(count: range.count)
            var total = 0
            while total < range.count {
                let count = data.withUnsafeMutableBytes { raw in
                    AtomicFile.retryingOnInterrupt {
                        FileSystem.active.pread(
                            fd, raw.baseAddress! + total, range.count - total, range.lowerBound + total)
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
            let fs = FileSystem.active
            var buffer = [UInt8](repeating: 0, count: chunkSize)
            var position = offset
            while true {
                let count = buffer.withUnsafeMutableBytes { raw in
                    AtomicFile.retryingOnInterrupt { fs.pread(fd, raw.baseAddress, raw.count, position) }
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
    static func readFile(
        _ name: String, in directory: Int32, path: String, limit: Int
    ) throws(FileStoreError) -> Data? {
        guard let fd = try openRegularFile(name, in: directory, path: path) else { return nil }
        defer { _ = FileSystem.active.close(fd) }
        return try readRegularFile(fd, path: path, limit: limit)
    }

    /// Opens `name` in `directory` for reading, without following a link and without blocking, or returns `nil`
    /// when it does not exist. The caller checks the kind of file before it reads (``requireRegularFile(_:path:)``).
    private static func openRegularFile(
        _ name: String, in directory: Int32, path: String
    ) throws(FileStoreError) -> Int32? {
        guard let kind = try kind(of: name, in: directory, path: path) else { return nil }
        if kind == S_IFLNK { throw FileStoreError(path: path, operation: .open, problem: .symbolicLink) }
        let fd = retryingOnInterrupt {
            FileSystem.active.openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0)
        }
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw error(path: path, operation: .open, errno: errno, at: name, in: directory)
        }
        return fd
    }

    /// Throws unless `fd` is a regular file; returns its size.
    static func requireRegularFile(_ fd: Int32, path: String) throws(FileStoreError) -> Int {
        var status = stat()
        if FileSystem.active.fstat(fd, &status) != 0 { throw FileStoreError(path: path, operation: .read, code: errno) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw FileStoreError(path: path, operation: .open, problem: .notRegularFile(found: describe(status)))
        }
        return Int(status.st_size)
    }

    /// Reads a file a person named on a command line: symbolic links are followed (the person chose the path),
    /// but only a regular file is read (a FIFO or a device is refused without blocking), at most `limit` bytes.
    package static func readNamedFile(atPath path: String, limit: Int) throws(FileStoreError) -> Data {
        let fd = retryingOnInterrupt { FileSystem.active.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0) }
        if fd < 0 { throw FileStoreError(path: path, operation: .open, code: errno) }
        defer { _ = FileSystem.active.close(fd) }
        return try readRegularFile(fd, path: path, limit: limit)
    }

    /// Checks that `fd` is a regular file of at most `limit` bytes, then reads it, never more than `limit + 1`
    /// bytes (the file may grow while it is read).
    private static func readRegularFile(_ fd: Int32, path: String, limit: Int) throws(FileStoreError) -> Data {
        guard try requireRegularFile(fd, path: path) <= limit else {
            throw FileStoreError(path: path, operation: .read, problem: .tooLarge(limit: limit))
        }
        let fs = FileSystem.active
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: min(64 * 1024, limit + 1))
        while true {
            let wanted = min(buffer.count, limit + 1 - data.count)
            let count = buffer.withUnsafeMutableBytes { raw in
                retryingOnInterrupt { fs.read(fd, raw.baseAddress, wanted) }
            }
            if count < 0 { throw FileStoreError(path: path, operation: .read, code: errno) }
            if count == 0 { return data }
            data.append(contentsOf: buffer[0..<count])
            if data.count > limit {
                throw FileStoreError(path: path, operation: .read, problem: .tooLarge(limit: limit))
            }
        }
    }
}

import Foundation

extension AtomicFile {
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
            if FileSystem.active.unlinkat(directory, name, 0) != 0 {
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
                    if FileSystem.active.unlinkat(parent, name, 0) != 0 && errno != ENOENT {
                        throw FileStoreError(path: path, operation: .remove, code: errno)
                    }
                    result.removed.append(path)
                    return
                }
                removeContents(of: name, in: parent, path: path, relative: "", into: &result)
                if FileSystem.active.unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOENT {
                    result.failures.append(FileStoreError(path: path, operation: .remove, code: errno))
                }
                flushDirectory(parent)
            }
        } catch {
            result.failures.append(error)
        }
        result.removed = result.removed.sorted(byName: \.self)
        return result
    }

    /// Deletes the temporary files that interrupted writes left in the directory at `url` (not below it).
    ///
    /// It runs under the directory's lock, so a write in progress in another process (which holds the lock from
    /// creating its temporary file to renaming it) is never broken: only a write that can no longer finish left
    /// what is removed. The lock is taken, and its file created, only when there is something to remove.
    package static func removeTemporaries(in url: URL) -> TreeRemoval {
        // The directory is the anchor, as it is for the files in it.
        removeTemporaries(in: FileLocation(anchor: url, components: ["."]), waitingAtMost: nil)
    }

    /// Removes the temporary files in the directory `location` names (its anchor, with the one component `.`), as
    /// the form taking its URL does, waiting for the lock at most `wait` (``lockWait`` is bound only when there is
    /// something to remove: a launch, which finds nothing, pays nothing for it).
    package static func removeTemporaries(in location: FileLocation, lockWait wait: Duration) -> TreeRemoval {
        removeTemporaries(in: location, waitingAtMost: wait)
    }

    /// Both forms of `removeTemporaries`: `wait` is the ``lockWait`` bound while the lock is taken, `nil` to leave it
    /// as it is. (A value, not a closure: a closure made the optimizer copy this function for each form.)
    private static func removeTemporaries(in location: FileLocation, waitingAtMost wait: Duration?) -> TreeRemoval {
        var result = TreeRemoval()
        do throws(FileStoreError) {
            try withDirectory(location, create: false) { (directory, _, lock) throws(FileStoreError) in
                guard let directory else { return }
                guard try entries(of: directory, path: location.anchor).contains(where: isTemporaryName) else { return }
                if let wait {
                    do {
                        try $lockWait.withValue(wait) { try lock.acquire() }
                    } catch let error as FileStoreError {
                        throw error
                    } catch {
                        preconditionFailure("DirectoryLock.acquire throws FileStoreError only")
                    }
                } else {
                    try lock.acquire()
                }
                // Listed again under the lock: what was listed before may have been a write in flight.
                for entry in try entries(of: directory, path: location.anchor) where isTemporaryName(entry) {
                    if FileSystem.active.unlinkat(directory, entry, 0) == 0 {
                        result.removed.append(entry)
                    } else if errno != ENOENT {
                        result.failures.append(
                            FileStoreError(path: location.anchor + "/" + entry, operation: .remove, code: errno))
                    }
                }
                // A temporary file that comes back after a power loss is removed again.
                if !result.removed.isEmpty { flushDirectory(directory, .plain) }
            }
        } catch {
            result.failures.append(error)
        }
        result.removed = result.removed.sorted(byName: \.self)
        return result
    }

    private static func removeContents(
        of name: String, in parent: Int32, path: String, relative: String, into result: inout TreeRemoval
    ) {
        let fs = FileSystem.active
        var fd = fs.openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        if fd < 0 && errno == EACCES {
            // A folder of ours made unreadable: make it readable again, so what it holds can go too.
            if fs.fchmodat(parent, name, 0o700, AT_SYMLINK_NOFOLLOW) == 0 {
                fd = fs.openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
            }
        }
        guard fd >= 0 else {
            result.failures.append(FileStoreError(path: path, operation: .open, code: errno))
            return
        }
        defer { _ = fs.close(fd) }
        let names: [String]
        do { names = try entries(of: fd, path: path) } catch {
            result.failures.append(error)
            return
        }
        for entry in names {
            let entryPath = path + "/" + entry
            let entryRelative = relative.isEmpty ? entry : relative + "/" + entry
            var status = stat()
            guard fs.fstatat(fd, entry, &status, AT_SYMLINK_NOFOLLOW) == 0 else {
                if errno != ENOENT {
                    result.failures.append(FileStoreError(path: entryPath, operation: .remove, code: errno))
                }
                continue
            }
            if status.st_mode & S_IFMT == S_IFDIR {
                removeContents(of: entry, in: fd, path: entryPath, relative: entryRelative, into: &result)
                if fs.unlinkat(fd, entry, AT_REMOVEDIR) != 0 && errno != ENOENT {
                    result.failures.append(FileStoreError(path: entryPath, operation: .remove, code: errno))
                }
            } else if fs.unlinkat(fd, entry, 0) == 0 {
                result.removed.append(entryRelative)
            } else if errno != ENOENT {
                result.failures.append(FileStoreError(path: entryPath, operation: .remove, code: errno))
            }
        }
        flushDirectory(fd)
    }

    /// The names in the directory at `location` (without `.` and `..`), reached without following a link.
    package static func entries(of location: FileLocation) throws(FileStoreError) -> [String] {
        guard let names = try entriesIfPresent(of: location) else {
            throw FileStoreError(path: location.path, operation: .list, code: ENOENT)
        }
        return names
    }

    /// The names in the directory at `location`, as ``entries(of:)`` lists them, or `nil` when it (or a directory on
    /// the way) does not exist: the usual case at a launch, which then builds no error.
    package static func entriesIfPresent(of location: FileLocation) throws(FileStoreError) -> [String]? {
        try withDirectory(reading: FileLocation(anchor: location.anchor, components: location.components + ["."])) {
            (directory, _) throws(FileStoreError) -> [String]? in
            guard let directory else { return nil }
            return try entries(of: directory, path: location.path)
        }
    }

    /// The names in the directory `fd` (without `.` and `..`). `fd` stays open and is not moved.
    private static func entries(of fd: Int32, path: String) throws(FileStoreError) -> [String] {
        guard let names = FileSystem.active.entries(fd) else {
            throw FileStoreError(path: path, operation: .list, code: errno)
        }
        return names
    }
}

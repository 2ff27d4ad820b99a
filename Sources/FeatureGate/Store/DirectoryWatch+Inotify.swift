import Dispatch
import Foundation

#if canImport(Glibc) || canImport(Musl)

/// `inotify`: one descriptor read by a dispatch source, a watch on the directory (or on its parent until it exists).
/// The watch descriptors are touched only on the serial queue.
final class DirectoryWatch: @unchecked Sendable {
    /// The files in the directory, and the directory itself renamed away or deleted (the path is what is watched).
    private static let fileEvents = UInt32(
        IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_CREATE | IN_MOVE_SELF | IN_DELETE_SELF)
    private static let directoryEvents = UInt32(IN_CREATE | IN_MOVED_TO) | UInt32(IN_ONLYDIR)
    /// The pending changes renamed into the intents' folder (never through a link at its name).
    private static let intentEvents = UInt32(IN_MOVED_TO) | UInt32(IN_ONLYDIR) | UInt32(IN_DONT_FOLLOW)

    private let handler: WatchHandler
    private let queue = DispatchQueue(label: "FeatureGate.DataDirectoryWatcher")
    private let descriptor: Int32
    private let source: any DispatchSourceRead
    private var directoryWatch: Int32 = -1
    private var parentWatch: Int32 = -1
    /// The intents' folder (``IntentJournal/directoryName``), while it exists: a pending change renamed into it is a
    /// change of the state (a reload reads it over the record).
    private var intentsWatch: Int32 = -1

    init(
        directory: PrivacyDataDirectory, handler: @escaping @Sendable (DataDirectoryChange) -> Void
    ) throws(FileStoreError) {
        self.handler = WatchHandler(directory: directory, handler: handler)
        descriptor = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        guard descriptor >= 0 else {
            throw FileStoreError(path: self.handler.directoryPath, operation: .open, code: errno)
        }
        source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        // Nothing else runs on the queue before the source resumes.
        do throws(FileStoreError) {
            try arm()
        } catch {
            close(descriptor)
            throw error
        }
        let descriptor = descriptor
        source.setEventHandler { [weak self] in self?.readEvents() }
        source.setCancelHandler { close(descriptor) }
        source.resume()
    }

    func cancel() {
        handler.cancel()
        source.cancel()
    }

    /// Watches the directory, or its parent while the directory does not exist. On the queue.
    private func arm() throws(FileStoreError) {
        directoryWatch = inotify_add_watch(descriptor, handler.directoryPath, Self.fileEvents)
        if directoryWatch >= 0 {
            if parentWatch >= 0 { inotify_rm_watch(descriptor, parentWatch) }
            parentWatch = -1
            armIntents()
            return
        }
        guard errno == ENOENT || errno == ENOTDIR else {
            throw FileStoreError(path: handler.directoryPath, operation: .open, code: errno)
        }
        guard parentWatch < 0 else { return }
        parentWatch = inotify_add_watch(descriptor, handler.parentPath, Self.directoryEvents)
        guard parentWatch >= 0 else { throw FileStoreError(path: handler.parentPath, operation: .open, code: errno) }
        // Created between the two calls: its creation event was missed.
        directoryWatch = inotify_add_watch(descriptor, handler.directoryPath, Self.fileEvents)
        if directoryWatch >= 0 {
            inotify_rm_watch(descriptor, parentWatch)
            parentWatch = -1
            armIntents()
        }
    }

    /// Watches the intents' folder if it exists and is not watched yet. On the queue. Called before the change that
    /// made it is reported, so the reload that follows lists what arrived before the watch, and the watch sees what
    /// arrives after.
    private func armIntents() {
        guard intentsWatch < 0 else { return }
        intentsWatch = inotify_add_watch(
            descriptor, handler.directoryPath + "/" + IntentJournal.directoryName, Self.intentEvents)
    }

    /// Reads every queued event and reports what changed, once. On the queue.
    private func readEvents() {
        var change: DataDirectoryChange = []
        var rearm = false
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer, capacity)
            guard count > 0 else { break }
            var offset = 0
            while offset + 16 <= count {
                let watch = buffer.load(fromByteOffset: offset, as: Int32.self)
                let mask = buffer.load(fromByteOffset: offset + 4, as: UInt32.self)
                let length = Int(buffer.load(fromByteOffset: offset + 12, as: UInt32.self))
                let nameStart = buffer.advanced(by: offset + 16).assumingMemoryBound(to: CChar.self)
                let name = length > 0 ? String(cString: nameStart) : ""
                offset += 16 + length
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    change = .all
                } else if watch == directoryWatch && mask & UInt32(IN_IGNORED | IN_MOVE_SELF | IN_DELETE_SELF) != 0 {
                    // The directory went away (deleted, or renamed: the watch would follow the old inode): watch the
                    // path again, or its parent until something is there again.
                    if mask & UInt32(IN_IGNORED) == 0 { inotify_rm_watch(descriptor, watch) }
                    directoryWatch = -1
                    rearm = true
                    change = .all
                } else if watch == intentsWatch {
                    // The folder went away (folded and emptied): watched again when it is created again.
                    if mask & UInt32(IN_IGNORED) != 0 { intentsWatch = -1 }
                    change.formUnion(.state)
                } else if watch == directoryWatch {
                    if name == IntentJournal.directoryName { armIntents() }
                    change.formUnion(DataDirectoryChange(fileName: name))
                } else if watch == parentWatch && name == handler.directoryName {
                    rearm = true
                    change = .all
                }
            }
        }
        if rearm { try? arm() }
        handler.report(change)
    }
}
#endif

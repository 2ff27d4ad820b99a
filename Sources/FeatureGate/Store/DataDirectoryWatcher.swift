import Dispatch
import Foundation

/// Which of FeatureGate's files in a data directory may have changed.
public struct DataDirectoryChange: OptionSet, Sendable, Hashable {
    /// The bits: one per file.
    public let rawValue: UInt8

    /// Creates a set from its raw bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The gate's state file (``PrivacyDataDirectory/stateFile``).
    public static let state = DataDirectoryChange(rawValue: 1 << 0)
    /// The consent ledger (``PrivacyDataDirectory/consentLedgerFile``).
    public static let ledger = DataDirectoryChange(rawValue: 1 << 1)
    /// The kept remote layer (``PrivacyDataDirectory/remoteLayerFile``).
    public static let remoteLayer = DataDirectoryChange(rawValue: 1 << 2)
    /// Every file: what a watcher reports when it cannot tell which changed (the directory itself appeared or went
    /// away, the system dropped events).
    public static let all: DataDirectoryChange = [.state, .ledger, .remoteLayer]

    /// The change a write of the file `name` in the directory makes, or `[]` for a file that is not FeatureGate's
    /// (the lock file, a temporary file, an SDK's subdirectory).
    public init(fileName name: String) {
        switch name {
        case PrivacyDataDirectory.stateFileName: self = .state
        case PrivacyDataDirectory.consentLedgerFileName: self = .ledger
        case PrivacyDataDirectory.remoteLayerFileName: self = .remoteLayer
        default: self = []
        }
    }
}

/// Tells when a data directory's files change, whichever process changed them: the seam through which a running
/// process learns of the changes its app's other processes (extensions) make.
///
/// ``SystemDataDirectoryWatcher`` is the real one; a test passes a double that reports changes when told.
public protocol DataDirectoryWatcher: Sendable {
    /// Starts watching `directory` and calls `handler` with the files that changed, soon after they change, until
    /// the returned token is cancelled or released.
    ///
    /// Watching creates, writes and deletes nothing, and works on a directory that does not exist yet (its parent
    /// must). Changes may be coalesced into one call, and this process's own writes are reported too: the handler
    /// re-reads, it does not count. Calls come one at a time, on a thread of the watcher's; once the token's
    /// `cancel()` returns, the handler is not running and is never called again.
    ///
    /// - Throws: ``FileStoreError`` when the watch cannot start (the parent of `directory` does not exist, the system
    ///   refuses a watch).
    func watch(
        _ directory: PrivacyDataDirectory, handler: @escaping @Sendable (DataDirectoryChange) -> Void
    ) throws(FileStoreError) -> ObservationToken
}

/// Watches a data directory with the system's file notifications: `inotify` on Linux, dispatch sources on Apple
/// platforms.
///
/// On Linux it watches the directory for a file written and closed, renamed into it or deleted (the gate's state
/// and the remote layer are renamed into place, the ledger is appended to and closed). On Apple platforms a
/// dispatch source on the directory sees files renamed into or deleted from it, and one on the ledger sees appends.
/// Until the directory exists, its parent is watched for its creation.
public struct SystemDataDirectoryWatcher: DataDirectoryWatcher {
    /// Creates a watcher. Touches nothing.
    public init() {}

    /// Starts the watch; see ``DataDirectoryWatcher/watch(_:handler:)``.
    public func watch(
        _ directory: PrivacyDataDirectory, handler: @escaping @Sendable (DataDirectoryChange) -> Void
    ) throws(FileStoreError) -> ObservationToken {
        let watch = try DirectoryWatch(directory: directory, handler: handler)
        return ObservationToken { watch.cancel() }
    }
}

/// What both platforms' watches share: the handler, stopped for good on cancel, and the paths.
private final class WatchHandler: Sendable {
    private let handler: ObservedHandler<DataDirectoryChange>
    let directoryPath: String
    let parentPath: String
    let directoryName: String

    init(directory: PrivacyDataDirectory, handler: @escaping @Sendable (DataDirectoryChange) -> Void) {
        self.handler = ObservedHandler(handler)
        var path = directory.url.path(percentEncoded: false)
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        directoryPath = path
        let slash = path.lastIndex(of: "/")
        parentPath = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        directoryName = slash.map { String(path[path.index(after: $0)...]) } ?? path
    }

    func report(_ change: DataDirectoryChange) {
        guard !change.isEmpty else { return }
        handler.call(change)
    }

    /// When it returns, the handler is not running on another thread and is never called again.
    func cancel() { handler.stop() }
}

#if canImport(Glibc) || canImport(Musl)
/// `inotify`: one descriptor read by a dispatch source, a watch on the directory (or on its parent until it exists).
/// The watch descriptors are touched only on the serial queue.
private final class DirectoryWatch: @unchecked Sendable {
    /// The files in the directory, and the directory itself renamed away or deleted (the path is what is watched).
    private static let fileEvents = UInt32(
        IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_CREATE | IN_MOVE_SELF | IN_DELETE_SELF)
    private static let directoryEvents = UInt32(IN_CREATE | IN_MOVED_TO) | UInt32(IN_ONLYDIR)

    private let handler: WatchHandler
    private let queue = DispatchQueue(label: "FeatureGate.DataDirectoryWatcher")
    private let descriptor: Int32
    private let source: any DispatchSourceRead
    private var directoryWatch: Int32 = -1
    private var parentWatch: Int32 = -1

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
        }
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
                } else if watch == directoryWatch {
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
#elseif canImport(Darwin)
/// Dispatch sources: one on the directory (entries renamed in, created or deleted), one on the ledger (appends),
/// one on the parent while the directory does not exist. Touched only on the serial queue.
private final class DirectoryWatch: @unchecked Sendable {
    private let handler: WatchHandler
    private let queue = DispatchQueue(label: "FeatureGate.DataDirectoryWatcher")
    private var directorySource: (any DispatchSourceFileSystemObject)?
    private var ledgerSource: (any DispatchSourceFileSystemObject)?
    private var parentSource: (any DispatchSourceFileSystemObject)?
    private var isCancelled = false

    init(
        directory: PrivacyDataDirectory, handler: @escaping @Sendable (DataDirectoryChange) -> Void
    ) throws(FileStoreError) {
        self.handler = WatchHandler(directory: directory, handler: handler)
        // On the queue: a source armed here may fire before the others are.
        try queue.sync { Result { () throws(FileStoreError) in try arm() } }.get()
    }

    func cancel() {
        handler.cancel()
        queue.async { [self] in
            isCancelled = true
            for source in [directorySource, ledgerSource, parentSource] { source?.cancel() }
        }
    }

    /// A source on `path` that calls `body` on the queue, or `nil` when `path` cannot be opened.
    private func source(
        _ path: String, _ events: DispatchSource.FileSystemEvent,
        _ body: @escaping @Sendable (DispatchSource.FileSystemEvent) -> Void
    ) -> (any DispatchSourceFileSystemObject)? {
        let descriptor = WatchedPath.open(path)
        guard descriptor >= 0 else { return nil }
        let source = DispatchSource.makeFileSystemObjectSource(
            fileDescriptor: descriptor, eventMask: events, queue: queue)
        // Read only on the queue, by its own handler; the cycle ends when the source is cancelled.
        nonisolated(unsafe) let events = source
        source.setEventHandler { body(events.data) }
        source.setCancelHandler { close(descriptor) }
        source.resume()
        return source
    }

    /// Opens what exists: the directory and the ledger, or the parent until the directory exists. On the queue.
    private func arm() throws(FileStoreError) {
        guard !isCancelled else { return }
        armDirectory()
        if directorySource == nil && parentSource == nil {
            parentSource = source(handler.parentPath, [.write]) { [unowned self] _ in
                try? arm()
                if directorySource != nil { handler.report(.all) }
            }
            guard parentSource != nil else {
                throw FileStoreError(path: handler.parentPath, operation: .open, code: errno)
            }
            // Created between the two opens: the parent's source never sees that creation, so look again (as the
            // Linux branch does after adding the parent's watch).
            armDirectory()
        }
        if directorySource != nil {
            parentSource?.cancel()
            parentSource = nil
        }
        if directorySource != nil && ledgerSource == nil {
            let ledgerPath = handler.directoryPath + "/" + PrivacyDataDirectory.consentLedgerFileName
            ledgerSource = source(ledgerPath, [.write, .extend, .delete, .rename]) { [unowned self] events in
                if !events.isDisjoint(with: [.delete, .rename]) {
                    ledgerSource?.cancel()
                    ledgerSource = nil
                    try? arm()
                }
                handler.report(.ledger)
            }
        }
    }

    /// Opens the directory's source if it is not open and the directory exists. On the queue.
    private func armDirectory() {
        guard directorySource == nil else { return }
        directorySource = source(handler.directoryPath, [.write, .delete, .rename]) { [unowned self] events in
            if !events.isDisjoint(with: [.delete, .rename]) {
                directorySource?.cancel()
                directorySource = nil
                ledgerSource?.cancel()
                ledgerSource = nil
            }
            try? arm()
            handler.report(.all)
        }
    }
}
#endif

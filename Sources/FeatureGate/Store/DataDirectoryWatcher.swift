import Dispatch
import Foundation

/// Which of FeatureGate's files in a data directory may have changed.
package struct DataDirectoryChange: OptionSet, Sendable, Hashable {
    /// The bits: one per file.
    package let rawValue: UInt8

    /// Creates a set from its raw bits.
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The gate's state file (``PrivacyDataDirectory/stateFile``).
    package static let state = DataDirectoryChange(rawValue: 1 << 0)
    /// The consent ledger (``PrivacyDataDirectory/consentLedgerFile``).
    package static let ledger = DataDirectoryChange(rawValue: 1 << 1)
    /// The kept remote layer (``PrivacyDataDirectory/remoteLayerFile``).
    package static let remoteLayer = DataDirectoryChange(rawValue: 1 << 2)
    /// Every file: what a watcher reports when it cannot tell which changed (the directory itself appeared or went
    /// away, the system dropped events).
    package static let all: DataDirectoryChange = [.state, .ledger, .remoteLayer]

    /// The change a write of the file `name` in the directory makes, or `[]` for a file that is not FeatureGate's
    /// (the lock file, a temporary file, an SDK's subdirectory). The intents' folder counts as the state.
    package init(fileName name: String) {
        switch name {
        // The intents' folder, created with the first pending take-away since it was last emptied: another
        // process's "no" a reload of the state reads at once (``IntentJournal``).
        case PrivacyDataDirectory.stateFileName, IntentJournal.directoryName: self = .state
        case PrivacyDataDirectory.consentLedgerFileName: self = .ledger
        case PrivacyDataDirectory.remoteLayerFileName: self = .remoteLayer
        default: self = []
        }
    }
}

/// Tells when a data directory's files change, whichever process changed them: the seam through which a running
/// process learns of the changes its app's other processes (extensions) make.
///
/// `SystemDataDirectoryWatcher` is the real one; a test passes a double that reports changes when told.
package protocol DataDirectoryWatcher: Sendable {
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
/// On both, the pending changes' folder is watched while it exists: a take-away renamed into it is a change of the
/// state. Until the directory exists, its parent is watched for its creation.
package struct SystemDataDirectoryWatcher: DataDirectoryWatcher {
    /// Creates a watcher. Touches nothing.
    package init() {}

    /// Starts the watch; see `DataDirectoryWatcher.watch(_:handler:)`.
    package func watch(
        _ directory: PrivacyDataDirectory, handler: @escaping @Sendable (DataDirectoryChange) -> Void
    ) throws(FileStoreError) -> ObservationToken {
        let watch = try DirectoryWatch(directory: directory, handler: handler)
        return ObservationToken { watch.cancel() }
    }
}

/// What both platforms' watches share: the handler, stopped for good on cancel, and the paths.
final class WatchHandler: Sendable {
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

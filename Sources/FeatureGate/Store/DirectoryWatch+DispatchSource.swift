import Dispatch
import Foundation

#if canImport(Darwin)

/// Dispatch sources: one on the directory (entries renamed in, created or deleted), one on the ledger (appends),
/// one on the intents' folder while it exists (pending changes renamed in), one on the parent while the directory
/// does not exist. Touched only on the serial queue.
final class DirectoryWatch: @unchecked Sendable {
    private let handler: WatchHandler
    private let queue = DispatchQueue(label: "FeatureGate.DataDirectoryWatcher")
    private var directorySource: (any DispatchSourceFileSystemObject)?
    private var ledgerSource: (any DispatchSourceFileSystemObject)?
    private var parentSource: (any DispatchSourceFileSystemObject)?
    private var intentsSource: (any DispatchSourceFileSystemObject)?
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
            for source in [directorySource, ledgerSource, parentSource, intentsSource] { source?.cancel() }
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
        // Armed before the directory's change that created the folder is reported: the reload that follows lists
        // what arrived before, the source sees what arrives after.
        if directorySource != nil && intentsSource == nil {
            let intentsPath = handler.directoryPath + "/" + IntentJournal.directoryName
            intentsSource = source(intentsPath, [.write, .delete, .rename]) { [unowned self] events in
                if !events.isDisjoint(with: [.delete, .rename]) {
                    intentsSource?.cancel()
                    intentsSource = nil
                }
                handler.report(.state)
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
                intentsSource?.cancel()
                intentsSource = nil
            }
            try? arm()
            handler.report(.all)
        }
    }
}
#endif

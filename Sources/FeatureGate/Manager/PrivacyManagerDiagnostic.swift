/// Something the manager noticed about its store and worked around, failing closed.
///
/// The manager never prints. It hands each diagnostic to the handler given at creation and keeps the ones
/// raised at start-up in ``PrivacyManager/startupDiagnostics``.
public enum PrivacyManagerDiagnostic: Sendable, CustomStringConvertible {
    /// The store threw while loading because what is there is not a record it reads (a symbolic link, a FIFO, a
    /// file over its size limit). The manager started from the configuration, as for a corrupt record.
    case loadFailed(store: String, error: any Error)
    /// The store could not be read (permissions, data protection, an I/O error) and may hold the user's decisions:
    /// every flag it might decide is off, and changes are held in memory, not saved, until it can be read again
    /// (tried again at each change and by ``PrivacyManager/retryHeldStore()``).
    case storeUnreadableWritesHeld(store: String, error: any Error)
    /// Another process held the store's lock longer than a caller may wait (``PrivacyManager`` never waits more than
    /// about 100 ms): the change applies in memory (a take-away was visible before the wait began), and writes are
    /// held as for an unreadable store (every flag the record might decide is off) and retried in the background
    /// until the lock is free, then merged into the record and saved (``storeReadableAgain(store:)``).
    case storeBusyWritesHeld(store: String, error: any Error)
    /// The store that could not be read can be read again: the changes held since were merged into its record.
    case storeReadableAgain(store: String)
    /// The stored record could not be decoded. The manager started from the configuration.
    case storedStateUnreadable(store: String, error: StoredStateError)
    /// The stored record had flags the catalog does not know; they were dropped.
    case unknownFlagsDropped(store: String, dropped: Feature)
    /// Saving a changed decision failed. The change holds in memory, but a later launch will not see it.
    case saveFailed(store: String, error: any Error)
    /// Resetting the stored record (for ``PrivacyConfiguration/resetEnabledFeatures``) failed: it could not be
    /// written. The configuration applies in this run, and the next save still resets the record.
    case removeFailed(store: String, error: any Error)
    /// ``PrivacyConfiguration/resetEnabledFeatures`` met a record written by a newer version of the package, and
    /// kept it as it is: rewriting it in this version's format would drop what this version does not understand
    /// (its refusals among them). The configuration applies in this run; saves leave the record alone too
    /// (``saveFailed(store:error:)``), and the newer version still reads it.
    case storedStateNewerNotReset(store: String, error: StoredStateError)
    /// A temporary file that an interrupted write left beside the store's record could not be removed at start-up.
    case temporaryFileNotRemoved(store: String, error: any Error)
    /// The kept remote layer exists but could not be read or interpreted. Every flag is remotely disabled until a
    /// valid payload replaces it.
    case remoteLayerUnreadable(file: String, error: any Error)
    /// Keeping a new remote payload failed. It applies until the app exits; a later launch starts from the old one.
    case remoteLayerSaveFailed(file: String, error: any Error)
    /// Another holder kept the remote layer's lock past the bound (about 100 ms): the new payload applies now, is on
    /// disk as a pending change that every start reads, and is written into the file once the lock is free, unless a
    /// newer payload replaces it first.
    case remoteLayerKeptLater(file: String)
    /// A pending change in the directory's `.featuregate-intents` folder (another process's take-away, made durable
    /// while the lock was busy) names a file it may not (a path, `..`, a name that is not the directory's own file
    /// of that kind), or carries a record that gives (a grant): the change, or that record, is ignored, never
    /// followed. `file` is the pending change's path; `reason` says what it named or carried and what was expected.
    case intentIgnored(file: String, reason: String)
    /// A take-away (a disable, a consent refusal, revoke-all, a kill-switch payload) that another holder's lock kept
    /// from being saved could not be made durable as a pending change either: it is in force in this process, in
    /// memory only, and a process killed before the lock is free loses it. `error` says why (the folder could not be
    /// written, or the store keeps no file the change could be written beside).
    case takeAwayNotDurable(store: String, error: any Error)
    /// Something other than a folder (a link, a FIFO, a file) was found where the data directory's pending changes
    /// belong (`.featuregate-intents`): it cannot hold them, and was moved aside to `movedTo` (never followed).
    case foreignEntryMovedAside(path: String, movedTo: String)
    /// A change whose save failed (``saveFailed(store:error:)``: a full or read-only disk, an I/O error) was saved
    /// now, by the retry the manager makes in the background, with growing pauses, while the process lives.
    /// `attempts` counts the retries it took.
    case failedSaveLanded(store: String, attempts: Int)

    /// One line: the store, what went wrong, and what the manager did about it.
    public var description: String {
        switch self {
        case .loadFailed(let store, let error):
            "\(store): cannot load stored features (\(error)); using the configuration"
        case .storedStateUnreadable(let store, let error):
            "\(store): \(error); using the configuration"
        case .storeUnreadableWritesHeld(let store, let error):
            "\(store): cannot read stored features (\(error)); every feature it may decide is off and changes are "
                + "held until it can be read"
        case .storeBusyWritesHeld(let store, let error):
            "\(store): another process holds the lock (\(error)); every feature it may decide is off and changes are "
                + "held and retried until it lets go"
        case .storeReadableAgain(let store):
            "\(store): stored features can be read again; the changes held meanwhile were merged and saved"
        case .unknownFlagsDropped(let store, let dropped):
            "\(store): stored features include unknown flags 0x\(String(dropped.rawValue, radix: 16)); dropped"
        case .saveFailed(let store, let error):
            "\(store): cannot save features (\(error)); the change holds until the app exits"
        case .removeFailed(let store, let error):
            "\(store): cannot reset stored features (\(error))"
        case .storedStateNewerNotReset(let store, let error):
            "\(store): \(error); kept as it is, not reset; using the configuration"
        case .temporaryFileNotRemoved(let store, let error):
            "\(store): cannot remove a temporary file an interrupted write left (\(error))"
        case .remoteLayerUnreadable(let file, let error):
            "\(file): cannot read the kept remote layer (\(error)); every feature is remotely disabled until a valid payload arrives"
        case .remoteLayerSaveFailed(let file, let error):
            "\(file): cannot keep the remote payload (\(error)); it applies until the app exits"
        case .remoteLayerKeptLater(let file):
            "\(file): another process holds the lock; the remote payload applies now and is kept once it lets go"
        case .failedSaveLanded(let store, let attempts):
            "\(store): the change whose save failed is saved now (retry \(attempts))"
        case .takeAwayNotDurable(let store, let error):
            "\(store): cannot make a take-away durable while another holder keeps the lock (\(error)); it holds in "
                + "this process, in memory only, until it is saved"
        case .foreignEntryMovedAside(let path, let movedTo):
            "\(UntrustedText.escapedPath(path)): not a folder where pending changes belong; moved aside to "
                + "\(UntrustedText.escapedPath(movedTo))"
        case .intentIgnored(let file, let reason):
            "\(UntrustedText.escapedPath(file)): a pending change \(reason); not followed"
        }
    }
}

extension PrivacyManagerDiagnostic {
    /// Why the stored gate state could not be decoded.
    public enum StoredStateError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The bytes are not a JSON object with the expected fields. The payload says what was found.
        case malformed(found: String)
        /// The record was written by a newer version of the package.
        case unsupportedVersion(found: Int, supported: Int)
        /// A change another process made durable while it waited for the lock (a file of the directory's
        /// `.featuregate-intents` folder) was written by a newer version of the package: every flag stays off and
        /// changes are held until a version that reads it folds it.
        case unsupportedIntentVersion(file: String, found: Int, supported: Int)

        /// What was found and what was expected.
        public var description: String {
            switch self {
            case .malformed(let found):
                "stored features are malformed: expected {\"version\": 2, \"enabledFeatures\": <bitmask>, "
                    + "\"decidedFeatures\": <bitmask>, \"deniedConsentCategories\": [<name>]}, found \(found)"
            case .unsupportedVersion(let found, let supported):
                "stored features have version \(found): expected version \(supported) or lower"
            case .unsupportedIntentVersion(let file, let found, let supported):
                "\(file): a pending change has version \(found): expected version \(supported) or lower"
            }
        }
    }
}

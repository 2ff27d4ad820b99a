import Foundation

extension PrivacyManager {
    /// Follows the changes the app's other processes (its extensions) write to the shared data directory: within
    /// moments, this process's checks, observers and subsystems reflect them like its own.
    ///
    /// Call it once, right after creating the manager (and its ``ConsentManager``), in every process that shares the
    /// directory, and keep the token for the life of the process. When another process saves the gate's state or
    /// keeps a remote payload, the manager re-reads them (``reloadStoredState()``): a denial made in an extension
    /// turns the app's features off, its observers hear of it once, and a `SubsystemRuntime` observing the gate stops
    /// and purges what it stops. When the consent ledger changes, `onLedgerChange` runs: hand it to the consent
    /// manager so its statuses follow the other process's records.
    ///
    /// Checks stay one atomic load: nothing is read on the check's path, only when the directory changes. Starting
    /// the watch creates, writes and deletes nothing (the directory need not exist yet), so a fully disabled process
    /// stays silent. This process's own writes are seen too; re-reading them changes nothing. With a consent
    /// manager:
    ///
    /// ```swift
    /// let watching = try privacy.watchForChangesFromOtherProcesses(in: data) {
    ///     Task { await consent.catchUpWithLedger() }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - directory: The data directory this manager's store, ledger and remote layer are in.
    ///   - watcher: What reports the changes; the system's file notifications unless a test passes a double.
    ///   - onLedgerChange: Runs, on the watcher's thread, when the consent ledger may have changed.
    /// - Returns: The token that stops the watch: cancel it, or release it.
    /// - Throws: ``FileStoreError`` when the watch cannot start (the directory's parent does not exist).
    public func watchForChangesFromOtherProcesses(
        in directory: PrivacyDataDirectory,
        watcher: any DataDirectoryWatcher = SystemDataDirectoryWatcher(),
        onLedgerChange: (@Sendable () -> Void)? = nil
    ) throws(FileStoreError) -> ObservationToken {
        try watcher.watch(directory) { [weak self] change in
            if !change.isDisjoint(with: [.state, .remoteLayer]) { self?.reloadStoredState() }
            if change.contains(.ledger) { onLedgerChange?() }
        }
    }

    /// Reads the stored state again every time protected data becomes available (the device was unlocked): a record
    /// that could not be read while the device was locked is read, and the changes held meanwhile are merged into it
    /// and saved (``retryHeldStore()``, ``reloadStoredState()``).
    ///
    /// - Parameters:
    ///   - availability: What tells when protected data becomes available; on iOS, the default follows
    ///     `UIApplication.protectedDataDidBecomeAvailableNotification`.
    ///   - onAvailable: Runs after the state was read again: hand it to the consent manager
    ///     (``ConsentManager/catchUpWithLedger()``), whose ledger may not have been readable either.
    /// - Returns: The token that stops it: cancel it, or release it.
    public func reloadWhenProtectedDataBecomesAvailable(
        _ availability: any ProtectedDataAvailability = NotificationCenterProtectedDataAvailability(),
        onAvailable: (@Sendable () -> Void)? = nil
    ) -> ObservationToken {
        availability.whenAvailable { [weak self] in
            self?.reloadStoredState()
            onAvailable?()
        }
    }
}

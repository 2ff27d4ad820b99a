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
    ///   - onLedgerChange: Runs, on the watcher's thread, when the consent ledger may have changed.
    /// - Returns: The token that stops the watch: cancel it, or release it.
    /// - Throws: ``FileStoreError`` when the watch cannot start (the directory's parent does not exist).
    public func watchForChangesFromOtherProcesses(
        in directory: PrivacyDataDirectory, onLedgerChange: (@Sendable () -> Void)? = nil
    ) throws(FileStoreError) -> ObservationToken {
        try watchForChangesFromOtherProcesses(
            in: directory, watcher: SystemDataDirectoryWatcher(), onLedgerChange: onLedgerChange)
    }

    /// ``watchForChangesFromOtherProcesses(in:onLedgerChange:)`` with the watcher that reports the changes: the
    /// system's file notifications, or a test's double.
    package func watchForChangesFromOtherProcesses(
        in directory: PrivacyDataDirectory,
        watcher: any DataDirectoryWatcher,
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
    /// Follows `UIApplication.protectedDataDidBecomeAvailableNotification` (by name: FeatureGate links no UIKit).
    /// To follow something else, call ``reloadStoredState()`` (and the consent manager's
    /// ``ConsentManager/catchUpWithLedger()``) when it says protected data is available.
    ///
    /// - Parameter onAvailable: Runs after the state was read again: hand it to the consent manager
    ///   (``ConsentManager/catchUpWithLedger()``), whose ledger may not have been readable either.
    /// - Returns: The token that stops it: cancel it, or release it.
    public func reloadWhenProtectedDataBecomesAvailable(onAvailable: (@Sendable () -> Void)? = nil) -> ObservationToken
    {
        reloadWhenProtectedDataBecomesAvailable(NotificationCenterProtectedDataAvailability(), onAvailable: onAvailable)
    }

    /// ``reloadWhenProtectedDataBecomesAvailable(onAvailable:)`` told by `availability` (tests' doubles).
    package func reloadWhenProtectedDataBecomesAvailable(
        _ availability: any ProtectedDataAvailability, onAvailable: (@Sendable () -> Void)? = nil
    ) -> ObservationToken {
        availability.whenAvailable { [weak self] in
            self?.reloadStoredState()
            onAvailable?()
        }
    }

    /// Reads the stored record and the kept remote layer again, and takes what other processes saved since: their
    /// decisions and refusals for every flag, with this process's unsaved change (one whose save failed) kept over
    /// them, as a save would merge it.
    ///
    /// ``watchForChangesFromOtherProcesses(in:onLedgerChange:)`` calls it whenever another process writes the
    /// state file or the remote layer; call it yourself when you learn of a change another way. Each real change of
    /// the effective set is published (one atomic store) and delivered to observers once. A category another
    /// process refused reads as refused at once; one it stopped refusing reads as this process's consent manager
    /// last judged it until that manager catches up with the ledger. Writes nothing, unless writes were held (then this is
    /// ``retryHeldStore()``).
    ///
    /// A record that cannot be read now (the device is locked) fails closed: writes are held and every undecided flag
    /// is off (``isHoldingWrites``) until a later reload or ``retryHeldStore()`` can read it; it is never overwritten
    /// with defaults. A corrupt record, or one of a newer format, changes nothing here and is reported. A remote layer
    /// that cannot be read disables every flag, as at start-up, until a valid payload replaces it.
    public func reloadStoredState() {
        let outcome = state.withLock { state -> ([PrivacyManagerDiagnostic], Bool) in
            var diagnostics: [PrivacyManagerDiagnostic] = []
            if state.rules.isHoldingWrites {
                diagnostics.append(AtomicFile.$lockWait.withValue(.zero) { retryHeldRecord(&state) })
            } else if let diagnostic = reloadRecord(&state) {
                diagnostics.append(diagnostic)
            }
            if let remoteLayer, let diagnostic = reloadRemoteLayer(remoteLayer, into: &state) {
                diagnostics.append(diagnostic)
            }
            return (diagnostics, publish(&state))
        }
        for diagnostic in outcome.0 { diagnosticHandler?(diagnostic) }
        if outcome.1 { deliverPending() }
    }

    /// Takes the record another process saved, with the take-aways still pending beside it (intents: another
    /// process's deferred or held "no", folded by the lock's next holder) and this process's unsaved change merged
    /// over it. Called under the lock; reads without the store's lock (a save replaces the record in one rename, an
    /// intent is renamed into its folder).
    private func reloadRecord(_ state: inout State) -> PrivacyManagerDiagnostic? {
        let storeName = String(describing: store)
        var stored: FeatureStateRecord
        do {
            // Removed (a process's `remove()`): nothing to take; this process's record is saved with its next change.
            guard let data = try store.load() else { return nil }
            stored = try FeatureStateRecord(decoding: data)
        } catch let error as PrivacyManagerDiagnostic.StoredStateError {
            return .storedStateUnreadable(store: storeName, error: error)
        } catch  where Self.mayBecomeReadable(error) {
            state.rules.holdWrites()
            return .storeUnreadableWritesHeld(store: storeName, error: error)
        } catch {
            return .loadFailed(store: storeName, error: error)
        }
        let owed = stored.purgeOwedFeatures
        // What every start reads: the record with the pending take-aways over it. Another running process's "no"
        // applies here as soon as its intent is written, not once a holder of the lock folds it.
        stored = Self.pendingIntents(for: store).intents.reduce(stored) { $1.applied(to: $0) }
        // As this process knows it: what it saves is compared with this, and must not read as taking away the flags
        // its catalog lacks or a revocation it does not hold in its rules.
        let known = FeatureStateRecord(
            enabledFeatures: catalog.mask(stored.enabledFeatures),
            decidedFeatures: catalog.mask(stored.decidedFeatures),
            deniedConsentCategories: stored.deniedConsentCategories)
        state.ledgerLength = Self.later(state.ledgerLength, stored.ledgerLength)
        state.owedPurges = owed
        guard known != state.saved else { return nil }
        // This process's own pending take-aways (``State/deferred``) again, should its intents not be readable; its
        // change is measured from what the store holds with them (``State/base``), as its saves measure it. From
        // `saved` instead, an enable made after a pending disable of the same flag read as no change, and the
        // record's "off" replaced it.
        let current = state.deferred.map { $0.applied(to: stored) } ?? stored
        state.rules.adopt(current.merging(changeFrom: state.base, to: state.rules.record))
        state.saved = known
        return nil
    }

    /// Takes the payload another process kept, if it changed. Called under the lock.
    private func reloadRemoteLayer(_ remoteLayer: RemoteLayerFile, into state: inout State) -> PrivacyManagerDiagnostic?
    {
        do {
            // Nothing kept (never, or removed): what applies stays until a payload says otherwise.
            guard let record = try remoteLayer.load(), record != state.remoteRecord else { return nil }
            let disables = try remoteLayer.interpreter.disables(in: record.payload)
            state.remoteRecord = record
            state.unkeptRemoteRecord = nil  // Theirs is newer than one this process could not keep.
            state.rules.setRemote(disables.features, rules: disables.rules)
            return nil
        } catch {
            state.remoteRecord = nil
            state.unkeptRemoteRecord = nil
            let disables = Self.everythingDisabled(catalog)
            state.rules.setRemote(disables.features, rules: disables.rules)
            return .remoteLayerUnreadable(file: remoteLayer.description, error: error)
        }
    }
}

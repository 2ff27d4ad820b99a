import Foundation

// MARK: - The remote layer

extension PrivacyManager {
    /// The kept payload and its validators (for a conditional request), or `nil` when none was kept.
    package var keptRemoteLayer: RemoteLayerRecord? { state.withLock { $0.remoteRecord } }

    /// Replaces the remote layer with `payload`: reads it with the layer's interpreter, keeps it in the layer's file,
    /// and disables exactly what it disables (lifting what the previous payload disabled and this one does not).
    ///
    /// The local layer is never touched, so lifting restores exactly what was there. The payload is kept only while
    /// some feature is enabled locally with consent, ignoring the kill switch itself: a fully disabled gate writes
    /// nothing, and a payload that disables everything can still be replaced. A file that cannot be written is
    /// reported to the diagnostic handler; the payload applies until the app exits. When another holder (another
    /// process) keeps the file's lock, the save is tried again outside the manager's lock for up to about 100 ms;
    /// past that, the payload is on disk before the call returns all the same, as an intent in the directory's
    /// `.featuregate-intents` folder that every start reads over the file and the lock's next holder writes into it
    /// (``PrivacyManagerDiagnostic/remoteLayerKeptLater(file:)``).
    ///
    /// - Parameters:
    ///   - payload: The server's response body, at most ``RemoteLayerFile/maximumSize`` bytes.
    ///   - entityTag: The response's `ETag`, kept for the next request's `If-None-Match`.
    ///   - lastModified: The response's `Last-Modified`, kept for the next request's `If-Modified-Since`.
    /// - Returns: What the payload disables.
    /// - Throws: ``RemoteLayerUpdateError``; the kept layer then stays as it was, on disk and in memory.
    @discardableResult
    public func applyRemotePayload(
        _ payload: Data, entityTag: String? = nil, lastModified: String? = nil
    ) throws(RemoteLayerUpdateError) -> RemoteDisables {
        guard let remoteLayer else { throw .noRemoteLayer }
        let disables: RemoteDisables
        do {
            guard payload.count <= RemoteLayerFile.maximumSize else {
                throw RemoteLayerFileError.tooLarge(size: payload.count)
            }
            disables = try remoteLayer.interpreter.disables(in: payload)
        } catch {
            throw .invalidPayload(error)
        }
        let record = RemoteLayerRecord(payload: payload, entityTag: entityTag, lastModified: lastModified)
        // What it disables is off before the payload is kept, and its file is written only when its lock is free
        // (with another process holding it, the save fails, is reported, and the next payload is kept).
        let outcome: Result<(any Error)?, RemoteLayerUpdateError> = withholding(disables.features) {
            update { state in
                guard !state.rules.unswitched.isEmpty else { return .failure(.nothingEnabled) }
                var saveError: (any Error)?
                if state.remoteRecord != record {
                    do { try AtomicFile.$lockWait.withValue(.zero) { try remoteLayer.save(record) } } catch {
                        saveError = error
                    }
                }
                // Only a kept payload is the kept record: one that could not be saved is saved by the next
                // application of it (the refresher's validators are the old ones, so the server sends it again),
                // or, when only the lock was busy, once it is free.
                if saveError == nil { state.remoteRecord = record }
                let isBusy = saveError.map(AtomicFile.isLockBusy) ?? false
                state.unkeptRemoteRecord = isBusy ? record : nil
                state.rules.setRemote(disables.features, rules: disables.rules)
                return .success(saveError)
            }
        }
        switch outcome {
        case .failure(let error): throw error
        case .success(let saveError?) where AtomicFile.isLockBusy(saveError):
            keepUnkeptRemoteRecord(in: remoteLayer, waitingAtMost: AtomicFile.lockWaitBound)
        case .success(let saveError?):
            diagnosticHandler?(.remoteLayerSaveFailed(file: remoteLayer.description, error: saveError))
        case .success(nil): break
        }
        return disables
    }

    /// Keeps the payload in force that another holder's lock kept from being saved: waits for the file's lock at
    /// most `bound`, outside the manager's lock, then saves it under both (so a newer payload applied meanwhile is
    /// the one kept, never overwritten by this one); past the bound, makes it durable as an intent without the lock
    /// (``IntentJournal``), reports it, and takes the lock in the background, where it waits as long as it takes
    /// and nobody waits on it: that folds the intent into the file (or, when the intent could not be written, saves
    /// the payload).
    func keepUnkeptRemoteRecord(in remoteLayer: RemoteLayerFile, waitingAtMost bound: Duration?) {
        let outcome = AtomicFile.withLock(of: remoteLayer.url, waitingAtMost: bound, takesAway: true) {
            state.withLock { state -> (any Error)? in
                guard let record = state.unkeptRemoteRecord else { return nil }
                state.unkeptRemoteRecord = nil
                // As when it was applied: a fully disabled gate writes nothing.
                guard !state.rules.unswitched.isEmpty else { return nil }
                do { try remoteLayer.save(record) } catch { return error }
                state.remoteRecord = record
                return nil
            }
        }
        switch outcome {
        case nil:
            let diagnostics = recordRemoteIntent(in: remoteLayer)
            diagnosticHandler?(.remoteLayerKeptLater(file: remoteLayer.description))
            for diagnostic in diagnostics { diagnosticHandler?(diagnostic) }
            let fileSystem = FileSystem.current
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + 0.01) { [weak self] in
                FileSystem.$current.withValue(fileSystem) {
                    self?.keepUnkeptRemoteRecord(in: remoteLayer, waitingAtMost: nil)
                }
            }
        case let error??:
            diagnosticHandler?(.remoteLayerSaveFailed(file: remoteLayer.description, error: error))
        case .some(nil):
            break
        }
    }

    /// Makes the payload in force that another process's lock kept from being saved durable at once, as an intent
    /// naming the kept bytes it replaces (the file with the intents before it over it), so that a kill before the
    /// lock is free loses nothing and an older payload never overwrites a newer one. Under the manager's lock, so a
    /// newer payload of this process is recorded after it. Leaves the payload to be saved when the file cannot be read
    /// or the intent written.
    private func recordRemoteIntent(in remoteLayer: RemoteLayerFile) -> [PrivacyManagerDiagnostic] {
        let location = FileLocation(file: remoteLayer.url)
        return state.withLock { state -> [PrivacyManagerDiagnostic] in
            guard let record = state.unkeptRemoteRecord else { return [] }
            // As when it was applied: a fully disabled gate writes nothing.
            guard !state.rules.unswitched.isEmpty else {
                state.unkeptRemoteRecord = nil
                return []
            }
            let kept: Data?
            do { kept = try remoteLayer.keptBytes() } catch {
                return [.takeAwayNotDurable(store: remoteLayer.description, error: error)]
            }
            let intent = TakeAwayIntent(
                stateFile: nil,
                remote: .init(
                    file: location.components[0], base: RemoteLayerFile.digest(of: kept ?? Data()), record: record))
            let (written, diagnostics) = Self.recordIntent(
                intent, in: location.anchor, store: remoteLayer.description)
            guard written else { return diagnostics }
            state.unkeptRemoteRecord = nil
            state.remoteRecord = record
            return diagnostics
        }
    }

    /// Reads the kept layer into the initial state (in `init`): its flags are off before anything can check them.
    static func loadRemoteLayer(
        _ remoteLayer: RemoteLayerFile, over intents: [TakeAwayIntent.RemoteIntent], into state: inout State,
        catalog: FeatureCatalog,
        diagnostics: inout [PrivacyManagerDiagnostic]
    ) {
        let disables: RemoteDisables
        do {
            guard let record = try remoteLayer.load(over: intents) else { return }
            disables = try remoteLayer.interpreter.disables(in: record.payload)
            state.remoteRecord = record
        } catch {
            // Fail closed: what the server last said is unknown, so nothing runs until it says again.
            diagnostics.append(.remoteLayerUnreadable(file: remoteLayer.description, error: error))
            disables = everythingDisabled(catalog)
        }
        state.rules.setRemote(disables.features, rules: disables.rules)
        state.effective = state.rules.effective
    }

    /// What an unreadable kept layer disables: every flag, since what the server last said is unknown.
    static func everythingDisabled(_ catalog: FeatureCatalog) -> RemoteDisables {
        RemoteDisables(
            features: catalog.allFeatures,
            rules: Dictionary(
                uniqueKeysWithValues: catalog.allFeatures.flags.map { ($0.rawValue, "kept remote layer unreadable") }))
    }
}

import Foundation

// MARK: - The remote layer

extension PrivacyManager {
    /// The kept payload and its validators (for a conditional request), or `nil` when none was kept.
    public var keptRemoteLayer: RemoteLayerRecord? { state.withLock { $0.remoteRecord } }

    /// Replaces the remote layer with `payload`: reads it with the layer's interpreter, keeps it in the layer's file,
    /// and disables exactly what it disables (lifting what the previous payload disabled and this one does not).
    ///
    /// The local layer is never touched, so lifting restores exactly what was there. The payload is kept only while
    /// some feature is enabled locally with consent, ignoring the kill switch itself: a fully disabled gate writes
    /// nothing, and a payload that disables everything can still be replaced. A file that cannot be written is
    /// reported to the diagnostic handler; the payload applies until the app exits.
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
                // application of it (the refresher's validators are the old ones, so the server sends it again).
                if saveError == nil { state.remoteRecord = record }
                state.rules.setRemote(disables.features, rules: disables.rules)
                return .success(saveError)
            }
        }
        switch outcome {
        case .failure(let error): throw error
        case .success(let saveError?):
            diagnosticHandler?(.remoteLayerSaveFailed(file: remoteLayer.description, error: saveError))
        case .success(nil): break
        }
        return disables
    }

    /// Reads the kept layer into the initial state (in `init`): its flags are off before anything can check them.
    static func loadRemoteLayer(
        _ remoteLayer: RemoteLayerFile, into state: inout State, catalog: FeatureCatalog,
        diagnostics: inout [PrivacyManagerDiagnostic]
    ) {
        let disables: RemoteDisables
        do {
            guard let record = try remoteLayer.load() else { return }
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

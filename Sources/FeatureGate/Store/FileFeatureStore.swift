import Foundation

/// A store that keeps the record in one file, replaced atomically on every save.
///
/// Processes may share the file (an app and its extensions in one app group container): every write takes the
/// directory's inter-process lock, and ``update(_:)``, which the manager saves with, re-reads the record under it.
///
/// A save writes a temporary file beside the target, flushes it to disk with `fsync`, renames it over the
/// target and flushes the directory. A process killed at any moment therefore leaves the old record or the
/// new one, never a torn or empty file.
///
/// The file and its directory are created on the first save, not before: a manager that never changes its
/// features never creates them. Loading a file that does not exist returns `nil` without creating anything.
///
/// The file is read only if it is a regular file of at most ``maximumRecordSize`` bytes, reached without following a
/// symbolic link; a link, a FIFO or a larger file is an error (``FileStoreError``) and reads as a corrupt record. A
/// save replaces whatever is at the path (a link itself, never its target).
///
/// On Darwin a save that takes anything away (a flag turned off, a consent refusal) is written through the drive's
/// cache (`F_FULLFSYNC`) before it returns; one that only adds (an enable) is only ordered (`F_BARRIERFSYNC`):
/// lost to a power cut, it leaves the older, less enabled record, which fails closed.
public struct FileFeatureStore: FeatureStore, CustomStringConvertible {
    /// The most bytes a record may take: 1 MiB. A record takes well under a kilobyte, even with every category
    /// of a large policy refused; the limit keeps a huge file from costing more memory than that.
    public static let maximumRecordSize = 1024 * 1024

    /// The file that holds the record.
    public let url: URL
    /// The record last read or written here: what the next save is compared with.
    private let lastRecord = LockedValue<FeatureStateRecord?>(nil)

    /// Creates a store backed by the file at `url`. Touches nothing on disk.
    ///
    /// Build the URL with `URL(filePath:)`, which does not stat the path, so creating the store does no I/O.
    public init(url: URL) {
        self.url = url
        self.location = FileLocation(file: url)
        IntentJournal.register(.state, at: location)
    }

    /// ``url`` as the file layer reaches it, worked out once.
    package let location: FileLocation

    /// ``url``: the manager takes its directory's lock and writes its pending take-aways beside it.
    public var recordFile: URL? { url }

    /// Reads the file. Returns `nil` when it does not exist.
    ///
    /// - Throws: ``FileStoreError`` when the file exists but cannot be read.
    public func load() throws -> Data? {
        let data = try AtomicFile.read(location, limit: Self.maximumRecordSize)
        lastRecord.withLock { $0 = data.flatMap { try? FeatureStateRecord(decoding: $0) } }
        return data
    }

    /// Writes `record` to the file atomically, creating the directory if needed.
    ///
    /// - Throws: ``FileStoreError`` naming the path, the operation and the system error.
    public func save(_ record: Data) throws {
        let new = try? FeatureStateRecord(decoding: record)
        try AtomicFile.write(record, to: url, durability: durability(ofSaving: new))
        lastRecord.withLock { $0 = new }
    }

    /// How durable saving `new` now must be, against the record last read or written here.
    package func durability(ofSaving new: FeatureStateRecord?) -> AtomicFile.Durability {
        Self.durability(replacing: lastRecord.withLock { $0 }, with: new)
    }

    /// `ordered` only when `new` takes nothing away from `old`: no flag leaves the enabled or decided set, every
    /// newly decided flag is on, no consent category is newly refused. `dataOnly` when `new` only records work done
    /// that `old` owed (a pending revocation's progress or removal, purges done): a power loss that undoes it
    /// leaves `old`, and the next start does that work again (a purge with nothing left deletes nothing, the
    /// erasure goes again under its idempotency key). Anything unknown is `full`.
    package static func durability(
        replacing old: FeatureStateRecord?, with new: FeatureStateRecord?
    ) -> AtomicFile.Durability {
        guard let old, let new else { return .full }
        if new.onlyRecordsWorkDone(owedBy: old) { return .dataOnly }
        let onlyAdds =
            new.enabledFeatures.isSuperset(of: old.enabledFeatures)
            && new.decidedFeatures.isSuperset(of: old.decidedFeatures)
            && new.enabledFeatures.isSuperset(of: new.decidedFeatures.subtracting(old.decidedFeatures))
            && new.deniedConsentCategories.isSubset(of: old.deniedConsentCategories)
            && new.pendingRevocation == old.pendingRevocation
        return onlyAdds ? .ordered : .full
    }

    /// Reads the file and replaces it with what `transform` returns, holding the data directory's inter-process
    /// lock from the read to the rename (see ``FeatureStore/update(_:)``). Writes nothing when `transform` returns
    /// `nil`.
    ///
    /// - Throws: ``FileStoreError`` when the file exists but cannot be read (nothing is written then), or cannot be
    ///   written.
    public func update(_ transform: (Data?) -> Data?) throws {
        var written: FeatureStateRecord??
        try AtomicFile.update(
            location, limit: Self.maximumRecordSize,
            durability: { old, new in
                let record = try? FeatureStateRecord(decoding: new)
                written = .some(record)
                let replaced = old.flatMap { try? FeatureStateRecord(decoding: $0) }
                // A consent change committed by its ledger line: a start replays the ledger after the replaced
                // state's point, so the rename may wait for the directory's next flush.
                if AtomicFile.isCommittedElsewhere, replaced?.ledgerLength != nil { return .dataOnly }
                return Self.durability(replacing: replaced, with: record)
            },
            transform)
        if let written { lastRecord.withLock { $0 = written } }
    }

    /// Deletes the file. Does nothing when it does not exist.
    ///
    /// - Throws: ``FileStoreError`` when the file exists but cannot be deleted.
    public func remove() throws {
        try AtomicFile.remove(at: url)
        lastRecord.withLock { $0 = nil }
    }

    /// The file's path, escaped.
    public var description: String { UntrustedText.escapedPath(url.path(percentEncoded: false)) }
}

extension FeatureStateRecord {
    /// Whether this record is `old` with owed work marked done, and nothing else changed: its pending revocation
    /// (the same request) progressed or removed, owed purges removed.
    fileprivate func onlyRecordsWorkDone(owedBy old: FeatureStateRecord) -> Bool {
        guard self != old, purgeOwedFeatures.isSubset(of: old.purgeOwedFeatures) else { return false }
        if let pending = pendingRevocation {
            guard let earlier = old.pendingRevocation, pending.isProgress(of: earlier) else { return false }
        }
        var compared = self
        compared.pendingRevocation = old.pendingRevocation
        compared.purgeOwedFeatures = old.purgeOwedFeatures
        return compared == old
    }
}

extension PendingRevocation {
    /// Whether this is `earlier` (the same request) with steps done and nothing newly owed: what joining another
    /// revoke-all (``joined(by:)``) adds is not.
    fileprivate func isProgress(of earlier: PendingRevocation) -> Bool {
        requestKey == earlier.requestKey && beganAt == earlier.beganAt
            && (!isErasureOwed || earlier.isErasureOwed)
            && (areSubsystemsPurged || !earlier.areSubsystemsPurged)
            && (isIdentifierDeleted || !earlier.isIdentifierDeleted)
            && (anonymousIdentifier == nil || anonymousIdentifier == earlier.anonymousIdentifier)
    }
}

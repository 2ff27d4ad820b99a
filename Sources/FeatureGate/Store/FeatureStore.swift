import Foundation

/// Where a ``PrivacyManager`` keeps the features the app or the user chose.
///
/// A store holds one opaque, versioned record that the manager encodes and decodes; the store only keeps the
/// bytes. The manager reads the store once, when it starts, and writes it only when a decision
/// really changes, so a store never sees traffic while nothing changes.
///
/// Implementations must be safe to call from any thread; the manager calls them with its write lock held, so
/// calls from one manager never overlap. Write ``FeatureStore/save(_:)`` atomically: after a crash at any moment
/// the store must hold either the old record or the new one.
public protocol FeatureStore: Sendable {
    /// Returns the stored record, or `nil` when nothing was ever saved (or it was removed).
    ///
    /// - Throws: When the record exists but cannot be read. The manager then fails closed: every flag starts off and
    ///   its changes are held in memory, not saved, until a later `load()` succeeds (see ``PrivacyManager``'s
    ///   "Start-up"). Throw a ``FileStoreError`` whose ``FileStoreError/problem`` is not `system` for a record that
    ///   is there but unusable (a link, a FIFO, too large): the manager then treats it as corrupt and starts from its
    ///   configuration.
    func load() throws -> Data?

    /// Replaces the stored record. Creates whatever backs the store (a file, say) if it does not exist yet.
    func save(_ record: Data) throws

    /// Deletes the stored record. Removing a record that does not exist succeeds and touches nothing.
    func remove() throws

    /// Reads the stored record (`nil` when there is none) and replaces it with what `transform` returns (nothing
    /// is written when it returns `nil`), so that no other writer of the same store, in this process or another,
    /// comes between the read and the write.
    ///
    /// The manager saves every change this way, merging its own change into the record just read, so a decision
    /// another process saved meanwhile is kept. `transform` only computes: it never waits or calls out, so a store
    /// may run it holding a lock. The default implementation calls ``load()`` then ``save(_:)``, which is atomic
    /// only against writers that share no process with another: implement it with a lock that other processes
    /// respect too (``FileFeatureStore`` takes an inter-process file lock).
    ///
    /// A record that is there but unusable (a ``FileStoreError`` whose problem is not `system`) is passed as `nil`.
    ///
    /// - Throws: When the record cannot be read (then `transform` is not called) or written.
    func update(_ transform: (Data?) -> Data?) throws

    /// The file the record is kept in, when it is a file of a data directory whose lock the store takes as
    /// ``FileFeatureStore`` does (``FileFeatureStore`` itself, or a store that wraps one); `nil`, the default, when
    /// the record is kept elsewhere.
    ///
    /// The manager takes that directory's lock around its saves and, while another process keeps it past the bound,
    /// makes a take-away (a disable, a refusal, revoke-all) durable at once beside the file, in the directory's
    /// `.featuregate-intents` folder, so a process killed before the lock is free loses no "no" it acknowledged. A
    /// store that wraps a ``FileFeatureStore`` returns the wrapped store's `recordFile`. With `nil`, such a take-away
    /// holds in memory only, and the manager says so
    /// (``PrivacyManagerDiagnostic/takeAwayNotDurable(store:error:)``).
    var recordFile: URL? { get }
}

extension FeatureStore {
    /// `nil`: the record is kept in no file of a data directory (see ``FeatureStore/recordFile``).
    public var recordFile: URL? { nil }

    /// Loads, transforms and saves, without a lock; see ``FeatureStore/update(_:)``.
    public func update(_ transform: (Data?) -> Data?) throws {
        let stored: Data?
        do { stored = try load() } catch let error as FileStoreError where error.isHostileContent { stored = nil }
        if let record = transform(stored) { try save(record) }
    }
}

/// A store that keeps the record in memory only: nothing survives the process.
///
/// Use it in tests, and for apps that want consent asked again at every launch.
public final class InMemoryFeatureStore: FeatureStore {
    private let record: LockedValue<Data?>

    /// Creates an empty store, or one that already holds `record` (handy for testing start-up).
    public init(record: Data? = nil) {
        self.record = LockedValue(record)
    }

    /// Returns the record held in memory.
    public func load() throws -> Data? { record.withLock { $0 } }

    /// Keeps `record` in memory.
    public func save(_ record: Data) throws { self.record.withLock { $0 = record } }

    /// Forgets the record.
    public func remove() throws { record.withLock { $0 = nil } }

    /// Transforms the record held in memory under the store's lock.
    public func update(_ transform: (Data?) -> Data?) throws {
        record.withLock { stored in
            if let replacement = transform(stored) { stored = replacement }
        }
    }
}

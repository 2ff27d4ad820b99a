import FeatureGate

/// A ready-made subsystem for SDK code whose data is one gated storage folder and, optionally, event buffers:
/// the runtime starts it with your `start` closure, stops it with `stop`, and its purge deletes every file of the
/// storage and drops every queued event.
///
/// ```swift
/// let push = StorageSubsystem("push", storage: stack.storage("push", for: .push)) { storage in
///     try storage.write(registration, to: "registration.json")
/// }
/// runtime.register(push)
/// ```
///
/// The features it needs are the storage's. Write a type of your own for anything more (identifiers to reset, an
/// opt-out request on stop: see ``StopReason/featuresDisabled(_:optOut:)``).
public final class StorageSubsystem: Subsystem {
    /// The name the runtime's journal and revoke-all's report use.
    public let name: String
    /// The storage's features.
    public var requiredFeatures: Feature { storage.features }
    /// The storage whose every file a purge deletes.
    public let storage: GatedStorage
    private let queues: [any PurgeableEventQueue]
    private let onStart: @Sendable (GatedStorage) async throws -> Void
    private let onStop: @Sendable (StopReason) async -> Void

    /// Creates the subsystem; it does nothing until the runtime starts it.
    ///
    /// - Parameters:
    ///   - name: Its name in the journal and in revoke-all's report.
    ///   - storage: Its files; their features are the subsystem's.
    ///   - eventQueues: Event buffers a purge empties as well (their events were captured under these features).
    ///   - start: Called when the features come on (the trailing closure).
    ///   - stop: Called when the features go off or the runtime shuts down, before the purge.
    public init(
        _ name: String,
        storage: GatedStorage,
        eventQueues: [any PurgeableEventQueue] = [],
        start: @escaping @Sendable (GatedStorage) async throws -> Void = { _ in },
        stop: @escaping @Sendable (StopReason) async -> Void = { _ in }
    ) {
        self.name = name
        self.storage = storage
        self.queues = eventQueues
        self.onStart = start
        self.onStop = stop
    }

    /// Runs the `start` closure with the storage.
    public func start() async throws { try await onStart(storage) }

    /// Runs the `stop` closure.
    public func stop(reason: StopReason) async { await onStop(reason) }

    /// Drops every queued event and deletes every file of the storage; reports what it could not delete.
    public func purge() async -> PurgeReport {
        var report = PurgeReport(droppedItems: queues.reduce(0) { $0 + $1.purge() })
        do {
            report.removedFiles = try storage.purge().map { "\(name)/\($0)" }
        } catch {
            report.failures.append("\(name): \(error)")
        }
        return report
    }
}

/// Something holding events captured under a feature, which a purge empties: a ``GatedEventBuffer``.
public protocol PurgeableEventQueue: Sendable {
    /// Drops everything queued and returns how many entries went.
    @discardableResult
    func purge() -> Int
}

extension GatedEventBuffer: PurgeableEventQueue {}

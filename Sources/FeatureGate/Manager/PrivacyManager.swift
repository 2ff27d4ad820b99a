import Foundation
import Synchronization

/// The gate: which features an SDK may use right now, who decided, and who to tell when that changes.
///
/// Create one per SDK (or app), early, and keep it for the life of the process:
///
/// ```swift
/// let privacy = PrivacyManager(
///     configuration: PrivacyConfiguration(enabledFeatures: []),   // default-off
///     store: FileFeatureStore(url: URL(filePath: supportDirectory + "/features.json"))
/// )
/// guard privacy.isEnabled(.analytics) else { return }             // one atomic load
/// ```
///
/// ## The effective set
/// The manager keeps a *local* set (what the configuration, the app or the user chose, and what it persists)
/// and a *remote-disabled* set (a server's kill switch, never persisted). The effective set, which every check
/// reads, is the local set minus the remote-disabled set, limited to the flags of the manager's catalog.
///
/// ## Start-up
/// The store is read once, in `init`. A stored record wins over the configuration unless
/// ``PrivacyConfiguration/resetEnabledFeatures`` is set, in which case the record is deleted. A record that
/// cannot be read is ignored in favour of the configuration, never of "all", and reported. Start-up writes
/// nothing (the reset deletion aside).
///
/// ## Thread safety
/// Every method may be called from any thread. ``isEnabled(_:)`` is a single lock-free atomic load and
/// allocates nothing. Writers serialize on a lock, persist while holding it (so the store sees changes in
/// order and none is lost), and notify observers after releasing it, in order, once per real change.
public final class PrivacyManager: Sendable {
    /// The effective set, read by every check without a lock.
    @usableFromInline let effectiveBits: Atomic<UInt>
    /// The local set, for ``isAnyFeatureEnabled(ignoringRemoteConfig:)``.
    @usableFromInline let localBits: Atomic<UInt>

    private let state: LockedValue<State>
    private let store: any FeatureStore
    private let diagnosticHandler: (@Sendable (PrivacyManagerDiagnostic) -> Void)?

    /// The configuration the manager started with.
    public let configuration: PrivacyConfiguration

    /// The flags this manager knows. Values outside it are dropped wherever they come from.
    public let catalog: FeatureCatalog

    /// What went wrong with the store at start-up, if anything. Empty after a clean start.
    public let startupDiagnostics: [PrivacyManagerDiagnostic]

    /// Creates the gate and reads the stored features once.
    ///
    /// - Parameters:
    ///   - configuration: The features to use when nothing is stored, and whether to discard what is.
    ///   - store: Where the local set persists. Nothing is written to it until the local set changes.
    ///   - catalog: The known flags; pass a catalog with your SDK's registered flags to keep them.
    ///   - diagnosticHandler: Called with every store problem the manager works around, including those at
    ///     start-up (synchronously, before `init` returns). The library never prints.
    public init(
        configuration: PrivacyConfiguration,
        store: any FeatureStore,
        catalog: FeatureCatalog = .builtIn,
        diagnosticHandler: (@Sendable (PrivacyManagerDiagnostic) -> Void)? = nil
    ) {
        self.configuration = configuration
        self.catalog = catalog
        self.store = store
        self.diagnosticHandler = diagnosticHandler

        let storeName = String(describing: store)
        var diagnostics: [PrivacyManagerDiagnostic] = []
        var local = catalog.mask(configuration.enabledFeatures)
        var source = FeatureSource.configuration

        if configuration.resetEnabledFeatures {
            // Deleting is the one write start-up may do, and only when there is something to delete.
            let exists: Bool
            do { exists = try store.load() != nil } catch { exists = true }
            if exists {
                do {
                    try store.remove()
                    source = .reset
                } catch {
                    diagnostics.append(.removeFailed(store: storeName, error: error))
                }
            }
        } else {
            do {
                if let record = try store.load() {
                    let stored = try FeatureStateRecord.decode(record)
                    let unknown = stored.subtracting(catalog.allFeatures)
                    if !unknown.isEmpty {
                        diagnostics.append(.unknownFlagsDropped(store: storeName, dropped: unknown))
                    }
                    local = catalog.mask(stored)
                    source = .storedState
                }
            } catch let error as FeatureStateRecordError {
                diagnostics.append(.storedStateUnreadable(store: storeName, error: error))
                source = .unreadableStoredState
            } catch {
                diagnostics.append(.loadFailed(store: storeName, error: error))
                source = .unreadableStoredState
            }
        }

        self.startupDiagnostics = diagnostics
        self.localBits = Atomic(local.rawValue)
        self.effectiveBits = Atomic(local.rawValue)
        self.state = LockedValue(State(local: local, startSource: source))
        for diagnostic in diagnostics { diagnosticHandler?(diagnostic) }
    }

    deinit {
        state.withLock { state in
            for subscriber in state.subscribers.values { subscriber.continuation.finish() }
        }
    }

    // MARK: - The hot path

    /// Whether every feature in `features` is enabled. One atomic load; safe from any thread.
    ///
    /// `isEnabled([])` follows Airship's rule: it is true only when *nothing* is enabled.
    @inlinable
    public func isEnabled(_ features: Feature) -> Bool {
        let current = effectiveBits.load(ordering: .acquiring)
        if features.rawValue == 0 { return current == 0 }
        return current & features.rawValue == features.rawValue
    }

    /// Whether at least one feature in `features` is enabled. One atomic load.
    @inlinable
    public func isAnyEnabled(_ features: Feature) -> Bool {
        effectiveBits.load(ordering: .acquiring) & features.rawValue != 0
    }

    /// Whether any feature at all is enabled. One atomic load.
    @inlinable
    public func isAnyFeatureEnabled() -> Bool {
        effectiveBits.load(ordering: .acquiring) != 0
    }

    /// Whether any feature is enabled, optionally looking past the remote kill switch.
    ///
    /// A remote-config fetcher passes `ignoringRemoteConfig: true` so it keeps running while the kill switch is
    /// on: otherwise it could never learn that the switch was lifted.
    @inlinable
    public func isAnyFeatureEnabled(ignoringRemoteConfig: Bool) -> Bool {
        if ignoringRemoteConfig { return localBits.load(ordering: .acquiring) != 0 }
        return effectiveBits.load(ordering: .acquiring) != 0
    }

    // MARK: - Changing the local set

    /// The effective set; setting it replaces the local set.
    ///
    /// Reading returns the local set minus ``remoteDisabledFeatures``. Writing replaces the local set, masked to
    /// the catalog: unknown bits are dropped, never enabled. A write that changes nothing persists and notifies
    /// nothing. Note that `manager.enabledFeatures.insert(x)` is a read-modify-write that can lose a concurrent
    /// update; use ``enableFeatures(_:)`` and ``disableFeatures(_:)`` instead.
    public var enabledFeatures: Feature {
        get { Feature(rawValue: effectiveBits.load(ordering: .acquiring)) }
        set { updateLocal { $0 = newValue } }
    }

    /// Adds `features` to the local set, atomically. Persists and notifies only on a real change.
    public func enableFeatures(_ features: Feature) {
        updateLocal { $0.formUnion(features) }
    }

    /// Removes `features` from the local set, atomically. Persists and notifies only on a real change.
    public func disableFeatures(_ features: Feature) {
        updateLocal { $0.subtract(features) }
    }

    /// Enables `enable` and disables `disable` in one atomic change of the local set: one save, one notification.
    ///
    /// A flag in both sets ends up disabled: when two decisions disagree, the gate fails closed.
    public func updateFeatures(enable: Feature = [], disable: Feature = []) {
        updateLocal { local in
            local.formUnion(enable)
            local.subtract(disable)
        }
    }

    /// The features a server has switched off, whatever the app or the user chose.
    ///
    /// This set subtracts from the effective set and is never written into the local set nor persisted: when the
    /// server lifts it, the local choices come back unchanged. Set it from each fresh remote config.
    public var remoteDisabledFeatures: Feature {
        get { state.withLock { $0.remote } }
        set {
            let remote = catalog.mask(newValue)
            let shouldDeliver = state.withLock { state in
                state.remote = remote
                return publish(&state)
            }
            if shouldDeliver { deliverPending() }
        }
    }

    /// Explains each flag in `features`: on or off, locally or remotely, and who decided.
    ///
    /// - Parameter features: The flags to explain; the default is every flag of the catalog.
    /// - Returns: One reason per flag, lowest bit first.
    public func reasons(for features: Feature? = nil) -> [FeatureReason] {
        let flags = (features ?? catalog.allFeatures).flags
        return state.withLock { state in
            flags.map { flag in
                FeatureReason(
                    feature: flag,
                    isLocallyEnabled: state.local.contains(flag),
                    isRemotelyDisabled: state.remote.contains(flag),
                    source: state.changedByApp.contains(flag) ? .app : state.startSource
                )
            }
        }
    }

    /// Explains one flag: on or off, and who decided.
    public func reason(for flag: Feature) -> FeatureReason {
        reasons(for: flag).first
            ?? FeatureReason(feature: flag, isLocallyEnabled: false, isRemotelyDisabled: false, source: .configuration)
    }

    private func updateLocal(_ body: (inout Feature) -> Void) {
        let outcome: (deliver: Bool, saveError: (any Error)?) = state.withLock { state in
            var local = state.local
            body(&local)
            local = catalog.mask(local)
            guard local != state.local else { return (false, nil) }
            state.changedByApp.formUnion(local.symmetricDifference(state.local))
            state.local = local
            localBits.store(local.rawValue, ordering: .releasing)
            var saveError: (any Error)?
            do { try store.save(FeatureStateRecord.encode(local)) } catch { saveError = error }
            return (publish(&state), saveError)
        }
        if let error = outcome.saveError {
            diagnosticHandler?(.saveFailed(store: String(describing: store), error: error))
        }
        if outcome.deliver { deliverPending() }
    }

    /// Recomputes the effective set and queues a change if it moved. Returns whether the caller must deliver.
    private func publish(_ state: inout State) -> Bool {
        let effective = state.local.subtracting(state.remote)
        guard effective != state.effective else { return false }
        state.sequence += 1
        state.pending.append((state.sequence, FeatureChange(previous: state.effective, current: effective)))
        state.effective = effective
        effectiveBits.store(effective.rawValue, ordering: .releasing)
        guard !state.isDelivering else { return false }
        state.isDelivering = true
        return true
    }

    /// Delivers queued changes outside the lock, one at a time and in order.
    ///
    /// Only one thread delivers at a time. A writer that finds delivery in progress leaves its change in the
    /// queue for the delivering thread, so an observer that changes features re-entrantly cannot deadlock, and
    /// no observer ever sees changes out of order.
    private func deliverPending() {
        while true {
            let next: (FeatureChange, [Observer], [Subscriber])? = state.withLock { state in
                guard !state.pending.isEmpty else {
                    state.isDelivering = false
                    return nil
                }
                let (sequence, change) = state.pending.removeFirst()
                // A callback or subscriber sees only changes made after it registered, even while an earlier
                // change is still being delivered.
                let observers = state.observers.filter { $0.startSequence < sequence }.map(\.handler)
                let subscribers = state.subscribers.values.filter { $0.startSequence < sequence }
                return (change, observers, subscribers)
            }
            guard let (change, observers, subscribers) = next else { return }
            for subscriber in subscribers { subscriber.continuation.yield(change.current) }
            for observer in observers { observer(change) }
        }
    }

    // MARK: - Observation

    /// Calls `handler` after every real change of the effective set, until the returned token is cancelled or
    /// released.
    ///
    /// The handler runs on the thread that made the change (or that was already delivering), outside the
    /// manager's lock, so it may read or change features. Changes arrive in order, once each, and only changes
    /// made after registration: one still being delivered to older observers when `observe` is called is not
    /// delivered to this one. The current set is not delivered at registration; read ``enabledFeatures`` for it.
    /// A call already under way when the token is cancelled may still finish.
    public func observe(_ handler: @escaping @Sendable (FeatureChange) -> Void) -> ObservationToken {
        let id = state.withLock { state in
            state.nextID += 1
            state.observers.append((state.nextID, state.sequence, handler))
            return state.nextID
        }
        return ObservationToken { [weak self] in
            self?.state.withLock { $0.observers.removeAll { $0.id == id } }
        }
    }

    /// The effective set now and after every real change, as an asynchronous sequence.
    ///
    /// Each `for await` loop is an independent subscription: it first receives the current effective set, then
    /// one element per real change, in order. No-ops (enabling what is on, a remote change that leaves the
    /// effective set as it was) produce nothing. Elements are buffered until the loop takes them. The sequence
    /// ends when the manager is deallocated; the subscription ends when the loop does.
    public var updates: FeatureUpdates { FeatureUpdates(manager: self) }

    func subscribe(_ continuation: AsyncStream<Feature>.Continuation) {
        let id = state.withLock { state in
            state.nextID += 1
            state.subscribers[state.nextID] = Subscriber(startSequence: state.sequence, continuation: continuation)
            continuation.yield(state.effective)
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
    }

    // MARK: - State

    private typealias Observer = @Sendable (FeatureChange) -> Void

    private struct Subscriber {
        var startSequence: UInt64
        var continuation: AsyncStream<Feature>.Continuation
    }

    private struct State {
        var local: Feature
        var remote: Feature = []
        var effective: Feature
        var startSource: FeatureSource
        var changedByApp: Feature = []
        var sequence: UInt64 = 0
        var pending: [(UInt64, FeatureChange)] = []
        var isDelivering = false
        var nextID: UInt64 = 0
        /// In registration order, so delivery needs no sorting.
        var observers: [(id: UInt64, startSequence: UInt64, handler: Observer)] = []
        var subscribers: [UInt64: Subscriber] = [:]

        init(local: Feature, startSource: FeatureSource) {
            self.local = local
            self.effective = local
            self.startSource = startSource
        }
    }
}

import Foundation

/// The gate: which features an SDK may use right now, who decided, and who to tell when that changes.
///
/// Create one per SDK (or app), early, and keep it for the life of the process:
///
/// ```swift
/// let privacy = PrivacyManager(
///     configuration: PrivacyConfiguration(enabledFeatures: []),   // default-off
///     store: FileFeatureStore(url: URL(filePath: supportDirectory + "/featuregate-state.json"))
/// )
/// guard privacy.isEnabled(.analytics) else { return }             // one atomic load
/// ```
///
/// ## The effective set
/// Every check reads the *effective* set: `local ∩ permitted − remoteDisabled`, limited to the catalog.
/// - **local**: per flag, either *decided* or *undecided*. ``enableFeatures(_:)``, ``disableFeatures(_:)``,
///   ``updateFeatures(enable:disable:)`` and the ``enabledFeatures`` setter decide the flags whose local value
///   they change; a ``ConsentManager`` grant or refusal decides every flag its category maps. An undecided flag
///   follows the configuration, so an app update's new defaults apply to it. Which flags are decided is persisted.
/// - **permitted**: what consent allows. Until a ``ConsentManager`` is attached, everything; then a flag that
///   consent categories map is permitted only while all of them allow processing. Never persisted: it is derived
///   from the consent ledger and the stored refusals at every start.
/// - **remoteDisabled**: ``remoteDisabledFeatures``, a server's kill switch. With a ``RemoteLayerFile``, the last
///   valid payload is kept in its own file and read in `init`, so it holds from the first check of the next launch
///   (see ``applyRemotePayload(_:entityTag:lastModified:)``); it is never written into the local layer.
///
/// Consent and the kill switch only take away, and never erase a choice: lifting them restores exactly what was
/// there. ``reason(for:)`` explains every layer.
///
/// ## Start-up
/// The store is read once, in `init`. A stored record's decided flags win over the configuration unless
/// ``PrivacyConfiguration/resetEnabledFeatures`` is set, in which case the record is rewritten with every flag
/// undecided (its consent refusals kept; a record of a newer format is kept whole and reported). A record that is
/// corrupt (or not a regular file within its size limit) is ignored in favour of the configuration, never of "all",
/// and reported. A record the store cannot read at all (permissions, data protection, an I/O error) may hold the
/// user's decisions, so it is never overwritten: every flag starts off unless decided in this run, and changes are
/// held in memory (``isHoldingWrites``). Each change, and ``retryHeldStore()``, reads the store again; once it
/// answers, the changes made meanwhile are merged over its record and saved. Start-up writes nothing (the reset
/// aside). With consent, pass the ``ConsentPolicy`` to `init`: until the ``ConsentManager`` is attached the gate
/// then withholds what an unanswered category withholds. Without it, consent withholds nothing until then, so create the consent manager right
/// after, before anything checks a flag.
///
/// ## Many processes
/// Processes may share one store (an app and its extensions): each save re-reads the record under the store's lock
/// and makes only this process's change over it, so a decision or refusal another process saved is never erased,
/// and the bits and decisions of flags this catalog lacks are kept. A record in a newer format is never overwritten:
/// the save is reported as failed instead. A running process learns of another's changes through
/// ``watchForChangesFromOtherProcesses(in:watcher:onLedgerChange:)`` (or ``reloadStoredState()``): its checks and
/// observers then reflect them like its own.
///
/// ## Take-aways apply first
/// A change that takes something away (``disableFeatures(_:)``, a consent denial, the kill switch, revoke-all) is
/// visible to ``isEnabled(_:)`` before the call returns, before anything is written and without waiting for any lock
/// another process can hold; persisting it follows. A change that gives something back is published once its save
/// was tried. No call waits for another process's lock on the data directory longer than about 100 ms, and never
/// while holding the manager's own lock (so ``reasons(for:)`` and checks never wait behind another process): past
/// that bound the change is held in memory as for an unreadable store (``isHoldingWrites``, reported as
/// ``PrivacyManagerDiagnostic/storeBusyWritesHeld(store:error:)``; every flag the record might decide reads off
/// meanwhile) and retried in the background until the lock is free. Start-up never waits either: it removes the
/// temporary files of interrupted writes only when the lock is free, and otherwise later, in the background.
///
/// ## Thread safety
/// Every method may be called from any thread. ``isEnabled(_:)`` is a single lock-free atomic load and
/// allocates nothing. Writers serialize on a lock and persist while holding it (so the store sees changes in
/// order and none is lost), trying the store's inter-process lock without waiting; they notify observers after
/// releasing it, in order, once per real change.
public final class PrivacyManager: Sendable {
    /// The effective set, read by every check without a lock.
    @usableFromInline let effectiveBits: AtomicWord<UInt>
    /// The effective set without the remote kill switch, for ``isAnyFeatureEnabled(ignoringRemoteConfig:)``.
    @usableFromInline let unswitchedBits: AtomicWord<UInt>

    private let state: LockedValue<State>
    /// Per bit, how many times the flag went from enabled to disabled (``disableCount(of:)``). A lock of its own,
    /// taken inside `state`'s when written, so readers never wait behind a save.
    private let disableCounts = LockedValue([UInt64](repeating: 0, count: UInt.bitWidth))
    private let store: any FeatureStore
    /// The revoke-all the store records as begun and not finished (see ``pendingRevocation``).
    private let revocation: LockedValue<PendingRevocation?>
    private let diagnosticHandler: (@Sendable (PrivacyManagerDiagnostic) -> Void)?
    /// Whether a background retry of held writes is scheduled: one at a time, however many changes were held.
    private let heldRetryScheduled = LockedValue(false)

    /// The configuration the manager started with.
    public let configuration: PrivacyConfiguration

    /// The flags this manager knows. Values outside it are dropped wherever they come from.
    public let catalog: FeatureCatalog

    /// The consent policy given at creation, if any: the one the attached ``ConsentManager`` uses.
    public let consentPolicy: ConsentPolicy?

    /// Where the server's kill switch is kept, if the manager was given one.
    public let remoteLayer: RemoteLayerFile?

    /// What went wrong with the store at start-up, if anything. Empty after a clean start.
    public let startupDiagnostics: [PrivacyManagerDiagnostic]

    /// Creates the gate and reads the stored state once.
    ///
    /// - Parameters:
    ///   - configuration: The value of every undecided flag, and whether to discard what is stored.
    ///   - store: Where the decided flags persist. Nothing is written to it until a decision changes.
    ///   - catalog: The known flags; pass a catalog with your SDK's registered flags to keep them.
    ///   - consentPolicy: The policy the ``ConsentManager`` attached to this gate will use, if one will. Given
    ///     here, the gate reads every category as unanswered from the start (stored refusals count as refused)
    ///     until the consent manager attaches and reads the ledger, so an opt-in category's features do not run in
    ///     between. A category in ``ConsentPolicy/permittedUntilAsked`` runs as unanswered categories do, so a
    ///     refusal only the ledger holds (the gate state's save failed) takes effect when the consent manager
    ///     attaches. Without the policy, consent permits everything until then: create it right after this.
    ///   - remoteLayer: Where the server's kill switch is kept. Its payload is read here, once, so the flags it
    ///     disables are off from the first check; a file that exists but cannot be read disables every flag (and
    ///     is reported) until a valid payload replaces it. Nothing is written here.
    ///   - diagnosticHandler: Called with every store problem the manager works around, including those at
    ///     start-up (synchronously, before `init` returns). The library never prints.
    public init(
        configuration: PrivacyConfiguration,
        store: any FeatureStore,
        catalog: FeatureCatalog = .builtIn,
        consentPolicy: ConsentPolicy? = nil,
        remoteLayer: RemoteLayerFile? = nil,
        diagnosticHandler: (@Sendable (PrivacyManagerDiagnostic) -> Void)? = nil
    ) {
        self.configuration = configuration
        self.catalog = catalog
        self.consentPolicy = consentPolicy
        self.remoteLayer = remoteLayer
        self.store = store
        self.diagnosticHandler = diagnosticHandler

        let storeName = String(describing: store)
        var diagnostics: [PrivacyManagerDiagnostic] = []
        var stored = FeatureStateRecord(enabledFeatures: [], decidedFeatures: [])
        var source = FeatureSource.configuration
        var held = false
        var heldBusy = false
        // What the store still holds when a reset could not be written: the next save must still reset it.
        var unreset: FeatureStateRecord?

        if configuration.resetEnabledFeatures {
            // Discarding is the one write start-up may do, and only when there is something to discard. Refusals
            // kept for consent are the user's, not the app's to reset: the record is rewritten with nothing decided
            // and everything else it keeps. One read-modify-write under the store's lock, so a refusal another process
            // saves between the read and the reset is not lost. A record in a newer format is kept as it is:
            // rewriting it in this format would drop what this version does not understand.
            var previous: FeatureStateRecord?
            var newer: FeatureStateRecordError?
            var (wasRead, resetting) = (false, false)
            do {
                // An unlocked look first: with nothing stored there is nothing to discard, and taking the store's
                // lock would create its directory and lock file.
                if try store.load() != nil {
                    // Never waiting long for another process: past the bound, writes are held and the reset
                    // happens with the first retry (see `mergeHeldWrites`).
                    try AtomicFile.$lockWait.withValue(AtomicFile.lockWaitBound) {
                        try store.update { data in
                            wasRead = true
                            guard let data else { return nil }
                            switch Self.storedForUpdate(data) {
                            case .failure(let error):
                                newer = error
                                return nil
                            case .success(let record): previous = record
                            }
                            if let previous, previous.pendingRevocation != nil {
                                // A revocation is unfinished: what it switched off stays off; no reset until it is done.
                                stored = previous
                                return nil
                            }
                            // Every flag undecided; what else the record keeps (the refusals) stays.
                            stored = previous ?? stored
                            stored.decidedFeatures = []
                            stored.enabledFeatures = []
                            resetting = true
                            let reset = stored.encoded()
                            return reset == data ? nil : reset
                        }
                    }
                    if resetting { source = .reset }
                }
            } catch  where !wasRead && AtomicFile.isLockBusy(error) {
                // Another process holds the lock: the reset is held and done by the first retry, never waited for.
                diagnostics.append(.storeBusyWritesHeld(store: storeName, error: error))
                held = true
                heldBusy = true
            } catch  where !wasRead && Self.mayBecomeReadable(error) {
                // The record may hold refusals: it is neither deleted nor overwritten while it cannot be read.
                diagnostics.append(.storeUnreadableWritesHeld(store: storeName, error: error))
                held = true
                source = .unreadableStoredState
            } catch  where !wasRead {
                // There but not a record (a link, a FIFO, a file over its limit): corrupt, as without a reset.
                diagnostics.append(.loadFailed(store: storeName, error: error))
                source = .unreadableStoredState
            } catch {
                diagnostics.append(.removeFailed(store: storeName, error: error))
                unreset = previous
            }
            if let newer {
                diagnostics.append(.storedStateNewerNotReset(store: storeName, error: newer))
                source = .unreadableStoredState
            }
        } else {
            do {
                if let data = try store.load() {
                    let record = try FeatureStateRecord(decoding: data)
                    let unknown = record.enabledFeatures.subtracting(catalog.allFeatures)
                    if !unknown.isEmpty {
                        diagnostics.append(.unknownFlagsDropped(store: storeName, dropped: unknown))
                    }
                    stored = record
                }
            } catch let error as FeatureStateRecordError {
                diagnostics.append(.storedStateUnreadable(store: storeName, error: error))
                source = .unreadableStoredState
            } catch  where Self.mayBecomeReadable(error) {
                diagnostics.append(.storeUnreadableWritesHeld(store: storeName, error: error))
                held = true
                source = .unreadableStoredState
            } catch {
                diagnostics.append(.loadFailed(store: storeName, error: error))
                source = .unreadableStoredState
            }
        }

        var initial = State(
            rules: GateRules(
                catalog: catalog, configured: configuration.enabledFeatures, stored: stored, undecidedSource: source,
                isHoldingWrites: held, consentPolicy: consentPolicy))
        if let unreset {
            initial.saved = FeatureStateRecord(
                enabledFeatures: catalog.mask(unreset.enabledFeatures),
                decidedFeatures: catalog.mask(unreset.decidedFeatures),
                deniedConsentCategories: unreset.deniedConsentCategories)
        }
        let unswitched = initial.rules.unswitched
        if let remoteLayer {
            Self.loadRemoteLayer(remoteLayer, into: &initial, catalog: catalog, diagnostics: &diagnostics)
        }
        self.revocation = LockedValue(stored.pendingRevocation)
        var temporariesLeft: URL?
        if let file = store as? FileFeatureStore {
            // Temporary files of writes a kill interrupted (under the lock; nothing is touched when there are none).
            // Start-up never waits for another process: with the lock taken, they are removed later.
            let directory = file.url.deletingLastPathComponent()
            let removal = AtomicFile.$lockWait.withValue(.zero) { AtomicFile.removeTemporaries(in: directory) }
            if removal.failures.contains(where: AtomicFile.isLockBusy) { temporariesLeft = directory }
            diagnostics += removal.failures.filter { !AtomicFile.isLockBusy($0) }.map {
                .temporaryFileNotRemoved(store: storeName, error: $0)
            }
        }
        self.startupDiagnostics = diagnostics
        self.unswitchedBits = AtomicWord(unswitched.rawValue)
        self.effectiveBits = AtomicWord(initial.effective.rawValue)
        self.state = LockedValue(initial)
        for diagnostic in diagnostics { diagnosticHandler?(diagnostic) }
        if let temporariesLeft {
            Self.removeTemporariesLater(in: temporariesLeft, store: storeName, diagnosticHandler: diagnosticHandler)
        }
        if heldBusy { retryHeldLater() }
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
    @available(*, deprecated, renamed: "isAnyEnabled()")
    @inlinable
    public func isAnyFeatureEnabled() -> Bool {
        effectiveBits.load(ordering: .acquiring) != 0
    }

    /// Whether any feature is enabled, optionally looking past the remote kill switch.
    ///
    /// A remote-config fetcher passes `ignoringRemoteConfig: true` so it keeps running while the kill switch is
    /// on: otherwise it could never learn that the switch was lifted. Consent still applies.
    @inlinable
    public func isAnyFeatureEnabled(ignoringRemoteConfig: Bool) -> Bool {
        if ignoringRemoteConfig { return unswitchedBits.load(ordering: .acquiring) != 0 }
        return effectiveBits.load(ordering: .acquiring) != 0
    }

    // MARK: - Changing the local set

    /// The effective set; setting it decides the flags whose effective value it changes.
    ///
    /// Reading returns `local ∩ permitted − remoteDisabled`. Writing is
    /// `updateFeatures(enable: newValue − current, disable: current − newValue)` against the effective set read
    /// under the same lock, masked to the catalog: a flag that consent or the kill switch hides keeps its local
    /// value unless `newValue` turns it on, so `privacy.enabledFeatures.insert(x)` never drops a hidden choice.
    /// The same holds for `enabledFeatures = []`: to turn off every flag, hidden ones included (an opt-out
    /// screen's "turn everything off"), call `disableFeatures(catalog.allFeatures)`. A write that changes nothing
    /// persists and notifies nothing. `insert` is still a read-modify-write that can lose a concurrent update;
    /// prefer ``enableFeatures(_:)`` and ``disableFeatures(_:)``.
    public var enabledFeatures: Feature {
        get { Feature(rawValue: effectiveBits.load(ordering: .acquiring)) }
        set {
            update { $0.rules.setEffective(newValue) }
        }
    }

    /// Turns `features` on in the local layer, atomically, deciding every flag it changes.
    ///
    /// A flag already on locally is left as it is (decided or following the configuration): a call that changes
    /// nothing persists and notifies nothing. A flag that consent withholds or the kill switch disables stays off
    /// until they allow it.
    public func enableFeatures(_ features: Feature) {
        update { $0.rules.decide(enable: features, disable: []) }
    }

    /// Turns `features` off in the local layer, atomically, deciding every flag it changes.
    ///
    /// A flag already off locally is left as it is: a call that changes nothing persists and notifies nothing. The
    /// flags are off for ``isEnabled(_:)`` before anything is written and before the call waits for anything another
    /// process holds; the save follows (see "Take-aways apply first" in the type's documentation).
    public func disableFeatures(_ features: Feature) {
        update { $0.rules.decide(enable: [], disable: features) }
    }

    /// Turns `enable` on and `disable` off in one atomic change of the local layer: one save, one notification.
    ///
    /// A flag in both sets ends up disabled: when two decisions disagree, the gate fails closed.
    @available(*, deprecated, message: "call disableFeatures(_:) and enableFeatures(_:): one way to change flags")
    public func updateFeatures(enable: Feature = [], disable: Feature = []) {
        update { $0.rules.decide(enable: enable, disable: disable) }
    }

    /// The features a server has switched off, whatever the app, the user or consent said.
    ///
    /// This set subtracts from the effective set and is never written into the local set: when the server lifts
    /// it, the local choices come back unchanged. ``applyRemotePayload(_:entityTag:lastModified:)`` sets it from a
    /// payload and keeps the payload; setting it directly keeps nothing, and replaces the kept payload's set until
    /// the next payload or launch.
    public var remoteDisabledFeatures: Feature {
        get { state.withLock { $0.rules.remote } }
        // No payload, so no rule to name: reason(for:) says "remote kill switch" alone.
        set { update { $0.rules.setRemote(newValue, rules: [:]) } }
    }

    /// Explains each flag in `features`: its local value and who decided it, what consent withholds, and the kill
    /// switch.
    ///
    /// - Parameter features: The flags to explain; the default is every flag of the catalog.
    /// - Returns: One reason per flag, lowest bit first.
    public func reasons(for features: Feature? = nil) -> [FeatureReason] {
        let flags = (features ?? catalog.allFeatures).flags
        return state.withLock { state in flags.map { state.rules.reason(for: $0) } }
    }

    /// Explains why `features` are on or off: for one flag, its reason; for several, the reason of the first flag
    /// (lowest bit) that holds the set off, or of the lowest flag when all are on. Never traps.
    ///
    /// The empty set explains nothing: its reason names no flag and reads off, from the configuration. For every
    /// flag of a set, use ``reasons(for:)``.
    public func reason(for features: Feature) -> FeatureReason {
        let all = reasons(for: features)
        return all.first { !$0.isEnabled } ?? all.first
            ?? FeatureReason(feature: [], isLocallyEnabled: false, isRemotelyDisabled: false, source: .configuration)
    }

    /// How many times a flag of `features` has gone from enabled to disabled in the effective set since the
    /// manager was created: a revocation counter, whatever layer revoked (the app, consent, the kill switch).
    ///
    /// It only grows. Two readings that differ prove a revocation happened in between, without waiting for
    /// observers, which may be told late while another thread is still delivering older changes: an SDK that holds
    /// data captured under a feature reads it at capture and again before the data leaves, and drops the data if it
    /// moved. Read it after ``isEnabled(_:)``, never before: a revocation is counted before the gate shows it
    /// closed, so an open gate read first and an unchanged count read after prove no revocation came between.
    ///
    /// Takes a small lock of its own (never held during I/O); not for the hot path (``isEnabled(_:)`` is).
    public func disableCount(of features: Feature) -> UInt64 {
        disableCounts.withLock { counts in
            var total: UInt64 = 0
            Self.forEachBit(of: features.rawValue) { total &+= counts[$0] }
            return total
        }
    }

    private static func forEachBit(of bits: UInt, _ body: (Int) -> Void) {
        var bits = bits
        while bits != 0 {
            body(bits.trailingZeroBitCount)
            bits &= bits - 1
        }
    }

    // MARK: - The consent layer (used by ConsentManager)

    /// The consent categories the gate state keeps as refused.
    var storedConsentRefusals: Set<ConsentCategory> {
        state.withLock { $0.rules.deniedCategories }
    }

    /// Attaches a consent layer judged by the consent manager, or replaces its decisions. Writes nothing.
    func setConsentDecisions(policy: ConsentPolicy, decisions: [ConsentCategory: ConsentDecision]) {
        update { $0.rules.consent = GateRules.ConsentLayer(policy: policy, decisions: decisions) }
    }

    /// Applies one consent edge: decides `category`'s features (on for a grant, off for a refusal, undecided for
    /// unknown), keeps the refusal in the gate state, and updates the permitted set from `decisions`. One save, one
    /// notification.
    ///
    /// With `isSavedElsewhere` (an edge another process recorded, read from the ledger), nothing is saved: that
    /// process saved its own change, and saving it again from here, late, could undo a newer one it made since.
    func applyConsentEdge(
        _ category: ConsentCategory,
        edge: ConsentStatus,
        policy: ConsentPolicy,
        decisions: [ConsentCategory: ConsentDecision],
        isSavedElsewhere: Bool = false
    ) {
        update(isSavedElsewhere: isSavedElsewhere) {
            $0.rules.applyConsentEdge(category, edge: edge, policy: policy, decisions: decisions)
        }
    }

    // MARK: - Writing

    /// Runs `body` on the state under the lock, then persists the record if it changed and publishes the effective
    /// set if it changed; delivers outside the lock.
    ///
    /// With `isSavedElsewhere`, the change is another process's, already in the store: it is taken into what this
    /// process last saved instead of being saved, so only this process's own changes are ever written from here.
    ///
    /// A change that takes anything away is published before the store is touched. The store's lock is only ever
    /// tried under the in-process lock, never waited for: while another process holds it, the save is tried again
    /// outside the in-process lock (``saveWhenLockFree()``), then held.
    private func update<Result>(isSavedElsewhere: Bool = false, _ body: (inout State) -> Result) -> Result {
        let outcome: (result: Result, deliver: Bool, diagnostic: PrivacyManagerDiagnostic?) = state.withLock { state in
            let before = state.rules.record
            let result = body(&state)
            let after = state.rules.record
            // Take-aways first: visible to every check before anything is written or waited for.
            let deliverEarly = takesAway(state) && publish(&state)
            var diagnostic: PrivacyManagerDiagnostic?
            if isSavedElsewhere {
                state.saved = state.saved.merging(changeFrom: before, to: after)
            } else if state.rules.isHoldingWrites {
                if after != before { diagnostic = AtomicFile.$lockWait.withValue(.zero) { retryHeldRecord(&state) } }
            } else if after != before && after != state.saved {
                // (Back to what was saved, after a failed save: the store holds it, nothing to write.)
                diagnostic = AtomicFile.$lockWait.withValue(.zero) { save(from: state.saved, to: after) }
                if diagnostic == nil { state.saved = after }
            }
            return (result, publish(&state) || deliverEarly, diagnostic)
        }
        if let diagnostic = outcome.diagnostic {
            if diagnostic.isLockBusy {
                saveWhenLockFree()
            } else {
                diagnosticHandler?(diagnostic)
            }
        }
        if outcome.deliver { deliverPending() }
        return outcome.result
    }

    /// Whether the state's effective set lacks something the gate shows now.
    private func takesAway(_ state: State) -> Bool {
        !state.effective.isSubset(of: state.rules.effective)
    }

    /// Waits for the store's lock another process held, outside the in-process lock, for up to
    /// ``AtomicFile/lockWaitBound``, and saves under it; past the bound, holds the writes (``isHoldingWrites``),
    /// reports ``PrivacyManagerDiagnostic/storeBusyWritesHeld(store:error:)`` and retries later. The record saved is
    /// the state as it is once the lock is taken, so a change made meanwhile on another thread goes with it.
    private func saveWhenLockFree() {
        let last = withStoreLock {
            state.withLock { state -> PrivacyManagerDiagnostic? in
                if state.rules.isHoldingWrites { return retryHeldRecord(&state) }
                let after = state.rules.record
                guard after != state.saved else { return nil }
                let diagnostic = save(from: state.saved, to: after)
                if diagnostic == nil { state.saved = after }
                return diagnostic
            }
        }
        switch last {
        case .some(nil): return
        case .some(let diagnostic?) where !diagnostic.isLockBusy:
            diagnosticHandler?(diagnostic)
            return
        default: break  // Another process kept the lock.
        }
        let outcome = state.withLock { state -> (PrivacyManagerDiagnostic?, Bool) in
            guard !state.rules.isHoldingWrites else { return (nil, false) }
            // Held as an unreadable store's writes are: merged over the record when the lock is free again.
            state.rules.holdWrites(unsavedSince: state.saved)
            return (.storeBusyWritesHeld(store: String(describing: store), error: Self.busyError), publish(&state))
        }
        if let diagnostic = outcome.0 { diagnosticHandler?(diagnostic) }
        if outcome.1 { deliverPending() }
        retryHeldLater()
    }

    /// What a save reports when another process kept the lock past the bound.
    private static var busyError: FileStoreError { FileStoreError(path: "", operation: .lock, code: EWOULDBLOCK) }

    /// Runs `body` holding the store's inter-process lock, taken before (never under) the in-process lock and waited
    /// for at most `bound`; `nil` when another process kept it that long. Another store (one wrapping a file store,
    /// say) runs `body` at once, its operations waiting at most `bound` for any lock they take.
    private func withStoreLock<Result>(
        waitingAtMost bound: Duration? = AtomicFile.lockWaitBound, _ body: () -> Result
    ) -> Result? {
        guard let file = store as? FileFeatureStore else { return AtomicFile.$lockWait.withValue(bound) { body() } }
        return AtomicFile.withLock(of: file.url, waitingAtMost: bound, body)
    }

    /// Runs `body` holding the inter-process lock of the gate state's directory (created if needed), waiting for it as
    /// long as it takes, so that what `body` writes there (a consent change's ledger record and gate state) is one
    /// critical section: no other process acts in between. Take-aways are applied before (``withholding(_:_:)``).
    /// Call it outside the manager's own lock; a store that is not a file runs `body` at once.
    package func withStoreLockHeld<Result>(_ body: () -> Result) -> Result {
        guard let file = store as? FileFeatureStore else { return body() }
        // (Never `nil`: the wait has no bound.)
        return AtomicFile.withLock(of: file.url, waitingAtMost: nil, inside: AtomicFile.lockWait, create: true, body)
            ?? body()
    }

    /// Tries the held writes again in the background, while another process's lock keeps them held; stops once they
    /// are saved or held for another reason (an unreadable store waits for a change, ``retryHeldStore()`` or a
    /// reload).
    ///
    /// One retry at a time, and it waits for the lock as long as it takes, on a background thread: nobody waits on
    /// it, and each bounded wait that gave up would leave a thread parked on the lock until the holder lets go.
    private func retryHeldLater() {
        let schedule = heldRetryScheduled.withLock { scheduled in
            defer { scheduled = true }
            return !scheduled
        }
        guard schedule else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + 0.01) { [weak self] in
            guard let self else { return }
            // Cleared before the attempt: a write held during it schedules the next one.
            self.heldRetryScheduled.withLock { $0 = false }
            let outcome = self.withStoreLock(waitingAtMost: nil) {
                self.state.withLock { state -> (PrivacyManagerDiagnostic?, Bool) in
                    guard state.rules.isHoldingWrites else { return (nil, false) }
                    return (self.retryHeldRecord(&state), self.publish(&state))
                }
            }
            guard let (last, deliver) = outcome, !(last?.isLockBusy ?? false) else {
                self.retryHeldLater()
                return
            }
            if deliver { self.deliverPending() }
            if let last { self.diagnosticHandler?(last) }
        }
    }

    /// Removes the temporary files start-up left because another process held the lock, in the background, as
    /// soon as the lock is free (tried with growing pauses, for up to about a minute).
    private static func removeTemporariesLater(
        in directory: URL, store: String, diagnosticHandler: (@Sendable (PrivacyManagerDiagnostic) -> Void)?,
        delay: Double = 0.1
    ) {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay) {
            let removal = AtomicFile.$lockWait.withValue(.seconds(1)) { AtomicFile.removeTemporaries(in: directory) }
            if removal.failures.contains(where: AtomicFile.isLockBusy) {
                if delay < 30 {
                    removeTemporariesLater(
                        in: directory, store: store, diagnosticHandler: diagnosticHandler, delay: delay * 2)
                }
                return
            }
            for failure in removal.failures {
                diagnosticHandler?(.temporaryFileNotRemoved(store: store, error: failure))
            }
        }
    }

    /// Saves this process's change from `before` (what it last saved or read, so a change whose save failed goes
    /// with the next one) to `after` as a read-modify-write of the store: the change is made over the record read
    /// under the store's lock, so decisions and refusals other processes saved meanwhile, and flags this catalog
    /// lacks, are kept (``FeatureStateRecord/merging(changeFrom:to:)``). A missing or corrupt record is replaced by
    /// this process's own. A record of a newer format is left as it is and reported: writing
    /// this format over it would drop what this version does not understand. Called under the lock.
    private func save(from before: FeatureStateRecord, to after: FeatureStateRecord) -> PrivacyManagerDiagnostic? {
        var newer: FeatureStateRecordError?
        do {
            try store.update { data in
                var base = before
                if let data {
                    switch Self.storedForUpdate(data) {
                    case .failure(let error):
                        newer = error
                        return nil
                    case .success(let record): base = record ?? before
                    }
                }
                let merged = base.merging(changeFrom: before, to: after).encoded()
                return merged == data ? nil : merged
            }
        } catch {
            return .saveFailed(store: String(describing: store), error: error)
        }
        return newer.map { .saveFailed(store: String(describing: store), error: $0) }
    }

    /// A record read under the store's lock for a read-modify-write: the record (`nil` when corrupt, so it is
    /// replaced), or the error of a record in a newer format, which is left as it is: writing this format over it
    /// would drop what this version does not understand.
    private static func storedForUpdate(_ data: Data) -> Result<FeatureStateRecord?, FeatureStateRecordError> {
        do throws(FeatureStateRecordError) {
            return .success(try FeatureStateRecord(decoding: data))
        } catch .unsupportedVersion(let found, let supported) {
            return .failure(.unsupportedVersion(found: found, supported: supported))
        } catch {
            return .success(nil)
        }
    }

    /// Whether a load error may pass (permissions, data protection, an I/O error), so the record must be kept
    /// rather than replaced. A record that is there but wrong (a link, a FIFO, a file over its limit) is not.
    private static func mayBecomeReadable(_ error: any Error) -> Bool {
        !((error as? FileStoreError)?.isHostileContent ?? false)
    }

    /// Whether changes are held in memory because the stored record could not be read (see "Start-up").
    public var isHoldingWrites: Bool { state.withLock { $0.rules.isHoldingWrites } }

    /// Tries to read a stored record that could not be read at start-up; when it can be read now, merges the
    /// changes made since start-up into it and saves the result. Does nothing when no writes are held.
    ///
    /// Every change retries on its own; call this when the record may have become readable without a change (on
    /// iOS, when protected data becomes available).
    ///
    /// - Returns: Whether writes are still held.
    @discardableResult
    public func retryHeldStore() -> Bool {
        let outcome = state.withLock { state -> (PrivacyManagerDiagnostic?, Bool, Bool) in
            guard state.rules.isHoldingWrites else { return (nil, false, false) }
            let diagnostic = AtomicFile.$lockWait.withValue(.zero) { retryHeldRecord(&state) }
            return (diagnostic, publish(&state), state.rules.isHoldingWrites)
        }
        if let diagnostic = outcome.0 { diagnosticHandler?(diagnostic) }
        if outcome.1 { deliverPending() }
        return outcome.2
    }

    // MARK: - Other processes

    /// Reads the stored record and the kept remote layer again, and takes what other processes saved since: their
    /// decisions and refusals for every flag, with this process's unsaved change (one whose save failed) kept over
    /// them, as a save would merge it.
    ///
    /// ``watchForChangesFromOtherProcesses(in:watcher:onLedgerChange:)`` calls it whenever another process writes the
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

    /// Takes the record another process saved, with this process's unsaved change merged over it. Called under the
    /// lock; reads without the store's lock (a save replaces the record in one rename).
    private func reloadRecord(_ state: inout State) -> PrivacyManagerDiagnostic? {
        let storeName = String(describing: store)
        let stored: FeatureStateRecord
        do {
            // Removed (a process's `remove()`): nothing to take; this process's record is saved with its next change.
            guard let data = try store.load() else { return nil }
            stored = try FeatureStateRecord(decoding: data)
        } catch let error as FeatureStateRecordError {
            return .storedStateUnreadable(store: storeName, error: error)
        } catch  where Self.mayBecomeReadable(error) {
            state.rules.holdWrites()
            return .storeUnreadableWritesHeld(store: storeName, error: error)
        } catch {
            return .loadFailed(store: storeName, error: error)
        }
        // As this process knows it: what it saves is compared with this, and must not read as taking away the flags
        // its catalog lacks or a revocation it does not hold in its rules.
        let known = FeatureStateRecord(
            enabledFeatures: catalog.mask(stored.enabledFeatures),
            decidedFeatures: catalog.mask(stored.decidedFeatures),
            deniedConsentCategories: stored.deniedConsentCategories)
        guard known != state.saved else { return nil }
        state.rules.adopt(stored.merging(changeFrom: state.saved, to: state.rules.record))
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
            state.rules.setRemote(disables.features, rules: disables.rules)
            return nil
        } catch {
            state.remoteRecord = nil
            let disables = Self.everythingDisabled(catalog)
            state.rules.setRemote(disables.features, rules: disables.rules)
            return .remoteLayerUnreadable(file: remoteLayer.description, error: error)
        }
    }

    /// Reads the store again; when it answers, takes its record as the base for every flag and refusal not
    /// changed since start-up, saves the merge (one read-modify-write under the store's lock), and stops holding
    /// writes. A record that is there but unusable (a link, a FIFO, too large) is replaced. A record in a newer
    /// format is left as it is and reported, and writes stay held: its decisions and refusals cannot be read, so
    /// undecided flags stay off. Called under the lock.
    private func retryHeldRecord(_ state: inout State) -> PrivacyManagerDiagnostic {
        let storeName = String(describing: store)
        var wasRead = false
        var newer: FeatureStateRecordError?
        do {
            try store.update { data in
                wasRead = true
                if let data, case .failure(let error) = Self.storedForUpdate(data) {
                    newer = error
                    return nil
                }
                return mergeHeldWrites(into: &state, stored: data)
            }
        } catch  where !wasRead && AtomicFile.isLockBusy(error) {
            return .storeBusyWritesHeld(store: storeName, error: error)
        } catch  where !wasRead && Self.mayBecomeReadable(error) {
            return .storeUnreadableWritesHeld(store: storeName, error: error)
        } catch  where !wasRead {
            do { try store.save(mergeHeldWrites(into: &state, stored: nil) ?? state.rules.record.encoded()) } catch {
                return .saveFailed(store: storeName, error: error)
            }
        } catch {
            return .saveFailed(store: storeName, error: error)
        }
        if let newer { return .saveFailed(store: storeName, error: newer) }
        state.saved = state.rules.record
        return .storeReadableAgain(store: storeName)
    }

    /// Merges the changes held since start-up over `stored` (the record just read) and stops holding writes;
    /// returns the record to save, or `nil` when it equals `stored`.
    private func mergeHeldWrites(into state: inout State, stored data: Data?) -> Data? {
        var base =
            (data.flatMap { try? FeatureStateRecord(decoding: $0) })
            ?? FeatureStateRecord(enabledFeatures: [], decidedFeatures: [])
        // As at start-up, an unfinished revocation is not reset: what it switched off stays off.
        let resets = configuration.resetEnabledFeatures && base.pendingRevocation == nil
        if resets {
            base = FeatureStateRecord(
                enabledFeatures: [], decidedFeatures: [], deniedConsentCategories: base.deniedConsentCategories)
        }
        state.rules.merge(undecidedSource: resets ? .reset : .configuration, stored: base)
        // Flags this catalog lacks keep their bits and decisions, and a revocation another process began stays.
        let record = state.rules.record
        let unknown = catalog.allFeatures.symmetricDifference(FeatureStateRecord.everyFlag)
        var merged = FeatureStateRecord(
            enabledFeatures: record.enabledFeatures.union(base.enabledFeatures.intersection(unknown)),
            decidedFeatures: record.decidedFeatures.union(base.decidedFeatures.intersection(unknown)),
            deniedConsentCategories: record.deniedConsentCategories)
        merged.pendingRevocation = base.pendingRevocation
        let encoded = merged.encoded()
        return encoded == data ? nil : encoded
    }

    /// Recomputes the effective set and queues a change if it moved. Returns whether the caller must deliver.
    private func publish(_ state: inout State) -> Bool {
        let effective = state.rules.effective
        let withheld = state.withheld.reduce(Feature()) { $0.union($1) }
        unswitchedBits.store(state.rules.unswitched.subtracting(withheld).rawValue, ordering: .releasing)
        guard effective != state.effective else {
            effectiveBits.store(effective.subtracting(withheld).rawValue, ordering: .releasing)
            return false
        }
        state.sequence += 1
        // Counted before the gate shows the change (see disableCount(of:)).
        let closing = state.effective.subtracting(effective)
        disableCounts.withLock { counts in
            Self.forEachBit(of: closing.subtracting(state.countedEarly).rawValue) { counts[$0] &+= 1 }
        }
        state.countedEarly.subtract(closing)
        state.pending.append((state.sequence, FeatureChange(previous: state.effective, current: effective)))
        state.effective = effective
        effectiveBits.store(effective.subtracting(withheld).rawValue, ordering: .releasing)
        guard !state.isDelivering else { return false }
        state.isDelivering = true
        return true
    }

    /// Closes `features` for every check at once (one atomic store), before a take-away that must first write or
    /// wait (a consent denial's ledger append, revoke-all's record, a kill switch payload), and keeps them closed
    /// until `body` returns; the take-away itself keeps them closed after. Observers hear of the change when the
    /// take-away applies, in order with everything else, not here. Waits for nothing another process holds.
    package func withholding<Result>(_ features: Feature, _ body: () throws -> Result) rethrows -> Result {
        beginWithholding(features)
        defer { endWithholding(features) }
        return try body()
    }

    /// Closes `features` for every check at once, until the matching ``endWithholding(_:)`` (see
    /// ``withholding(_:_:)``).
    package func beginWithholding(_ features: Feature) {
        guard !features.isEmpty else { return }
        state.withLock { state in
            // Counted before the gate shows them closed (see disableCount(of:)), once: not again when the take-away
            // closes them for observers too.
            let shown = state.effective.subtracting(state.withheld.reduce(Feature()) { $0.union($1) })
            let closing = shown.intersection(features).subtracting(state.countedEarly)
            disableCounts.withLock { counts in Self.forEachBit(of: closing.rawValue) { counts[$0] &+= 1 } }
            state.countedEarly.formUnion(closing)
            state.withheld.append(features)
            _ = publish(&state)
        }
    }

    /// Ends one ``beginWithholding(_:)`` of `features`: checks show what the rules say again.
    package func endWithholding(_ features: Feature) {
        guard !features.isEmpty else { return }
        state.withLock { state in
            if let index = state.withheld.firstIndex(of: features) { state.withheld.remove(at: index) }
            // What the take-away did not close after all opens again: its next closing counts.
            state.countedEarly.formIntersection(state.withheld.reduce(Feature()) { $0.union($1) })
            _ = publish(&state)
        }
    }

    /// Delivers queued changes outside the lock, one at a time and in order.
    ///
    /// Only one thread delivers at a time. A writer that finds delivery in progress leaves its change in the
    /// queue for the delivering thread, so an observer that changes features re-entrantly cannot deadlock, and
    /// no observer ever sees changes out of order.
    private func deliverPending() {
        while true {
            let next = state.withLock { state -> (UInt64, FeatureChange, [ObserverEntry], [Subscriber])? in
                guard !state.pending.isEmpty else {
                    state.isDelivering = false
                    return nil
                }
                let (sequence, change) = state.pending.removeFirst()
                let subscribers = state.subscribers.values.filter { $0.startSequence < sequence }
                // The observer list itself, copy-on-write: taking it allocates nothing.
                return (sequence, change, state.observers, subscribers)
            }
            guard let (sequence, change, observers, subscribers) = next else { return }
            // A callback or subscriber sees only changes made after it registered, even while an earlier change is
            // still being delivered.
            for subscriber in subscribers { subscriber.continuation.yield(change.current) }
            for observer in observers where observer.startSequence < sequence { observer.handler(change) }
        }
    }

    // MARK: - Observation
    //
    // One way for each job: `updates` follows the effective set from async code (current set first);
    // `readAndObserve(_:)` follows it from synchronous code (the set it starts from, then every change);
    // `observe(_:)` only hears of changes (a log, a refresh of something read anew each time).

    /// Calls `handler` after every real change of the effective set, until the returned token is cancelled or
    /// released: for code that only needs to hear of changes.
    ///
    /// The handler runs on the thread that made the change (or that was already delivering), outside the
    /// manager's lock, so it may read or change features. Changes arrive in order, once each, and only changes
    /// made after registration: one still being delivered to older observers when `observe` is called is not
    /// delivered to this one. The current set is not delivered at registration: code that acts on edges (starts,
    /// stops, opts out) needs the set it starts from, so it uses ``readAndObserve(_:)`` (or ``updates``).
    /// Once ``ObservationToken/cancel()`` returns, the handler is never called again (a call running on another
    /// thread is waited for).
    public func observe(_ handler: @escaping @Sendable (FeatureChange) -> Void) -> ObservationToken {
        readAndObserve(handler).token
    }

    /// Reads the effective set and registers `handler` in one step: every change the handler receives was made
    /// after `current`, and every change made after it reaches the handler.
    ///
    /// This is how synchronous code follows the set: start what `current` enables, then act on each change's
    /// edges (start, stop, opt out). Reading ``enabledFeatures`` just before or after ``observe(_:)`` instead leaves
    /// a window in which a change shows in the set read and is also delivered (late) to the handler, or in
    /// neither. The handler behaves as with ``observe(_:)``. From async code, ``updates`` does the same.
    public func readAndObserve(
        _ handler: @escaping @Sendable (FeatureChange) -> Void
    ) -> (current: Feature, token: ObservationToken) {
        let observed = ObservedHandler(handler)
        let (id, current) = state.withLock { state in
            state.nextID += 1
            state.observers.append(
                ObserverEntry(id: state.nextID, startSequence: state.sequence, handler: { observed.call($0) }))
            return (state.nextID, state.effective)
        }
        let token = ObservationToken(stopping: observed) { [weak self] in
            // Returned, so the entry is released after the lock: it may hold the last reference to something
            // whose deinit uses this manager, or to the manager itself.
            _ = self?.state.withLock { state in
                state.observers.firstIndex { $0.id == id }.map { state.observers.remove(at: $0) }
            }
        }
        return (current, token)
    }

    /// Renamed ``readAndObserve(_:)``: `observe` hears of changes only, `readAndObserve` also reads the set it
    /// starts from.
    @available(*, deprecated, renamed: "readAndObserve(_:)")
    public func observeFromNow(
        _ handler: @escaping @Sendable (FeatureChange) -> Void
    ) -> (current: Feature, token: ObservationToken) {
        readAndObserve(handler)
    }

    /// The effective set now and after every real change, as an asynchronous sequence: how async code follows
    /// the set (``readAndObserve(_:)`` is the synchronous twin).
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

    /// A registered callback, and the sequence number of the last change made before it registered.
    private struct ObserverEntry {
        var id: UInt64
        var startSequence: UInt64
        var handler: Observer
    }

    private struct Subscriber {
        var startSequence: UInt64
        var continuation: AsyncStream<Feature>.Continuation
    }

    private struct State {
        /// The layers and the rules that change them.
        var rules: GateRules
        /// The record as this process last read or saved it: what differs from it is this process's to save.
        var saved: FeatureStateRecord
        /// The kept payload, read at start-up or applied since.
        var remoteRecord: RemoteLayerRecord?
        /// The effective set as last published to the atomics and queued for delivery.
        var effective: Feature
        var sequence: UInt64 = 0
        var pending: [(UInt64, FeatureChange)] = []
        var isDelivering = false
        var nextID: UInt64 = 0
        /// In registration order, so delivery needs no sorting.
        var observers: [ObserverEntry] = []
        var subscribers: [UInt64: Subscriber] = [:]
        /// What take-aways under way close before they are applied (``withholding(_:_:)``), one entry each.
        var withheld: [Feature] = []
        /// What a withholding closed and counted (``disableCount(of:)``) before observers were told.
        var countedEarly: Feature = []

        init(rules: GateRules) {
            self.rules = rules
            self.saved = rules.record
            self.effective = rules.effective
        }
    }
}

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
                state.remoteRecord = record
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
    private static func loadRemoteLayer(
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
    private static func everythingDisabled(_ catalog: FeatureCatalog) -> RemoteDisables {
        RemoteDisables(
            features: catalog.allFeatures,
            rules: Dictionary(
                uniqueKeysWithValues: catalog.allFeatures.flags.map { ($0.rawValue, "kept remote layer unreadable") }))
    }
}

// MARK: - A revocation in progress

extension PrivacyManager {
    /// The revoke-all that began and has not finished, as the store recorded it; `nil` when there is none.
    ///
    /// Read from the store at start-up: after a process died during revoke-all, the gate starts revoked and this
    /// says what is left to do (see ``PendingRevocation``).
    public var pendingRevocation: PendingRevocation? { revocation.withLock { $0 } }

    /// Records that a revocation began, before anything else changes: one read-modify-write of the store, under its
    /// lock, that keeps `pending` (or the one already pending, joined by it: see
    /// ``PendingRevocation/joined(by:)``), decides every flag off (the catalog's and any other the record holds) and
    /// refuses `categories`. Then applies the same in memory.
    ///
    /// - Returns: The pending revocation now recorded, and the store's error when it could not be written (the gate
    ///   is revoked in memory all the same).
    package func beginRevocation(
        _ pending: PendingRevocation, refusing categories: Set<ConsentCategory>
    ) -> (pending: PendingRevocation, error: (any Error)?) {
        // Everything closes at once, before the store is written or its lock waited for (never longer than
        // `AtomicFile.lockWaitBound`, and never under the in-process lock).
        withholding(catalog.allFeatures) { beginRevocationWithheld(pending, refusing: categories) }
    }

    private func beginRevocationWithheld(
        _ pending: PendingRevocation, refusing categories: Set<ConsentCategory>
    ) -> (pending: PendingRevocation, error: (any Error)?) {
        var recorded = pending
        let error: (any Error)? =
            withStoreLock { recordRevocation(pending, refusing: categories, as: &recorded) } ?? Self.busyError
        update { $0.rules.revoke(refusing: categories) }
        return (recorded, error)
    }

    /// One try of ``beginRevocation(_:refusing:)``'s write, under the in-process lock.
    private func recordRevocation(
        _ pending: PendingRevocation, refusing categories: Set<ConsentCategory>, as recorded: inout PendingRevocation
    ) -> (any Error)? {
        state.withLock { _ in
            if let earlier = revocation.withLock({ $0 }) { recorded = earlier.joined(by: pending) }
            do {
                try store.update { data in
                    var record =
                        data.flatMap { try? FeatureStateRecord(decoding: $0) }
                        ?? FeatureStateRecord(enabledFeatures: [], decidedFeatures: [])
                    if let earlier = record.pendingRevocation { recorded = earlier.joined(by: pending) }
                    record.decidedFeatures.formUnion(catalog.allFeatures.union(record.enabledFeatures))
                    record.enabledFeatures = []
                    record.deniedConsentCategories.formUnion(categories)
                    record.pendingRevocation = recorded
                    return record.encoded()
                }
            } catch {
                return error
            }
            revocation.withLock { $0 = recorded }
            return nil
        }
    }

    /// Changes the pending revocation whose key is `key`, in the store (a read-modify-write under its lock) and in
    /// memory; removes it once ``PendingRevocation/isFinished``. Does nothing when none with that key is pending.
    ///
    /// - Throws: The store's error; memory is left as it was then, so the step is done again next time.
    package func updatePendingRevocation(key: UUID, _ change: (inout PendingRevocation) -> Void) throws {
        // The store's lock is waited for (briefly) before the in-process lock is taken, never under it.
        guard let outcome = withStoreLock({ Result { try updatePendingRevocationOnce(key: key, change) } }) else {
            throw Self.busyError
        }
        try outcome.get()
    }

    /// One try of ``updatePendingRevocation(key:_:)``, under the in-process lock.
    private func updatePendingRevocationOnce(key: UUID, _ change: (inout PendingRevocation) -> Void) throws {
        try state.withLock { _ in
            guard var pending = revocation.withLock({ $0 }), pending.requestKey == key else { return }
            change(&pending)
            let next = pending.isFinished ? nil : pending
            try store.update { data in
                guard let data, var record = try? FeatureStateRecord(decoding: data),
                    record.pendingRevocation?.requestKey == key
                else { return nil }
                record.pendingRevocation = next
                return record.encoded()
            }
            revocation.withLock { $0 = next }
        }
    }
}

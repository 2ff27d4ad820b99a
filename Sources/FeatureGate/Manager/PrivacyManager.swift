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
/// The kill switch only takes away, and never erases a choice: lifting it restores exactly what was there. Consent
/// takes away with a refusal, and a grant turns on the features its category maps (by default `analytics` maps
/// analytics and tags and attributes), whatever the configuration enabled. ``reason(for:)`` explains every layer.
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
/// ``watchForChangesFromOtherProcesses(in:onLedgerChange:)`` (or ``reloadStoredState()``): its checks and
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
/// ## Flushed off the caller's thread
/// On a ``FileFeatureStore``, an app decision that only takes away (``disableFeatures(_:)``, and an
/// ``updateFeatures(enable:disable:)`` or ``enabledFeatures`` set that only turns flags off) takes no lock and makes no
/// flush on the caller's thread: it writes a pending change beside the state (a kill of the process right after keeps
/// it), and one flusher per manager saves the state off the caller's thread, take-aways made meanwhile sharing its
/// flush. A power loss before that flush leaves the state before the call or after it, never more enabled. Call
/// ``synchronize()`` where that must not happen. A take-away behind another process's lock is no held write: it is
/// pending, and the flusher saves it once the lock is free.
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

    let state: LockedValue<State>
    /// Per bit, how many times the flag went from enabled to disabled (``disableCount(of:)``). Atomic words, written
    /// only under `state`'s lock and read without any, so an event buffer's `track` reads them on its hot path.
    @usableFromInline let disableCounts = AtomicWordBuffer<UInt>(repeating: 0, count: UInt.bitWidth)
    let store: any FeatureStore
    /// The revoke-all the store records as begun and not finished (see `pendingRevocation`).
    let revocation: LockedValue<PendingRevocation?>
    let diagnosticHandler: (@Sendable (PrivacyManagerDiagnostic) -> Void)?
    /// Whether a background retry of held writes is scheduled: one at a time, however many changes were held.
    let heldRetryScheduled = LockedValue(false)
    /// Whether a retry of a save that failed (a full or read-only disk) is scheduled (see `retryFailedSaveLater`).
    let failedSaveRetryScheduled = LockedValue(false)

    /// The configuration the manager started with.
    public let configuration: PrivacyConfiguration

    /// The flags this manager knows. Values outside it are dropped wherever they come from.
    public let catalog: FeatureCatalog

    /// The consent policy given at creation, if any: the one the attached ``ConsentManager`` uses.
    public let consentPolicy: ConsentPolicy?

    /// Where the server's kill switch is kept, if the manager was given one.
    public let remoteLayer: RemoteLayerFile?

    /// How far into the consent ledger the gate state read at start-up reflects (0 with no state at all; `nil`
    /// when unknown): where ``ConsentManager`` replays the ledger's tail from.
    let ledgerPointAtStart: Int?

    /// Whether the store held a record at start-up: a consent replay at start saves the gate state only then
    /// (start-up creates no file).
    let hadRecordAtStart: Bool

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

        // For diagnostics only: built when one is.
        lazy var storeName = String(describing: store)
        var diagnostics: [PrivacyManagerDiagnostic] = []
        var stored = FeatureStateRecord(enabledFeatures: [], decidedFeatures: [])
        var source = FeatureSource.configuration
        var held = false
        var heldBusy = false
        // What the store still holds when a reset could not be written: the next save must still reset it.
        var unreset: FeatureStateRecord?
        // Whether a record was read: a store that holds none reflects none of the consent ledger.
        var hasRecord = false
        // Take-aways another process made durable while the lock was busy, not folded yet: read before the store,
        // so one that a fold (of another process, or this one's own below) deletes meanwhile is in the record read.
        let (intents, newerIntent, ignoredIntents) = Self.pendingIntents(for: store)
        diagnostics += ignoredIntents

        if configuration.resetEnabledFeatures {
            // Discarding is the one write start-up may do, and only when there is something to discard. Refusals
            // kept for consent are the user's, not the app's to reset: the record is rewritten with nothing decided
            // and everything else it keeps. One read-modify-write under the store's lock, so a refusal another process
            // saves between the read and the reset is not lost. A record in a newer format is kept as it is:
            // rewriting it in this format would drop what this version does not understand.
            var previous: FeatureStateRecord?
            var newer: PrivacyManagerDiagnostic.StoredStateError?
            var (wasRead, resetting) = (false, false)
            do {
                // An unlocked look first: with nothing stored there is nothing to discard, and taking the store's
                // lock would create its directory and lock file.
                hasRecord = try store.load() != nil
                if hasRecord {
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
                            // Every flag undecided but those revoke-all decided off; the refusals stay.
                            stored = (previous ?? stored).reset
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
                    hasRecord = true
                    let record = try FeatureStateRecord(decoding: data)
                    let unknown = record.enabledFeatures.subtracting(catalog.allFeatures)
                    if !unknown.isEmpty {
                        diagnostics.append(.unknownFlagsDropped(store: storeName, dropped: unknown))
                    }
                    stored = record
                }
            } catch let error as PrivacyManagerDiagnostic.StoredStateError {
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

        // The intents read first are in force from here (folded twice, they change nothing more).
        if !intents.isEmpty {
            stored = intents.reduce(stored) { $1.applied(to: $0) }
        }
        if let newer = newerIntent {
            // A newer version's change may take away what this one cannot read: every flag off, the user's choices
            // kept on disk (writes held) until that version folds it.
            diagnostics.append(.storeUnreadableWritesHeld(store: storeName, error: newer))
            stored = FeatureStateRecord(
                enabledFeatures: [], decidedFeatures: [], deniedConsentCategories: stored.deniedConsentCategories)
            source = .unreadableStoredState
            held = true
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
        // The payloads kept as intents (another process held the lock): read over the file, and folded below.
        let remoteIntents = remoteLayer?.pendingIntents() ?? []
        if let remoteLayer {
            Self.loadRemoteLayer(
                remoteLayer, over: remoteIntents, into: &initial, catalog: catalog, diagnostics: &diagnostics)
        }
        self.revocation = LockedValue(stored.pendingRevocation)
        var temporariesLeft: URL?
        if let file = store.recordFile {
            // Temporary files of writes a kill interrupted (under the lock; nothing is touched when there are none).
            // Start-up never waits for another process: with the lock taken, they are removed later. The directory
            // is the file's anchor: no URL is built unless the removal has to wait.
            let directory = FileLocation(anchor: FileLocation(file: file).anchor, components: ["."])
            let removal = AtomicFile.removeTemporaries(in: directory, lockWait: .zero)
            if removal.failures.contains(where: AtomicFile.isLockBusy) {
                temporariesLeft = file.deletingLastPathComponent()
            }
            diagnostics += removal.failures.filter { !AtomicFile.isLockBusy($0) }.map {
                .temporaryFileNotRemoved(store: storeName, error: $0)
            }
        }
        self.startupDiagnostics = diagnostics
        self.unswitchedBits = AtomicWord(unswitched.rawValue)
        self.effectiveBits = AtomicWord(initial.effective.rawValue)
        initial.ledgerLength = stored.ledgerLength
        initial.owedPurges = stored.purgeOwedFeatures
        // No record at all (and no trouble reading one) reflects none of the ledger; a record an earlier version
        // wrote says nothing about it.
        self.ledgerPointAtStart = stored.ledgerLength ?? (hasRecord || !diagnostics.isEmpty ? nil : 0)
        self.hadRecordAtStart = hasRecord
        self.state = LockedValue(initial)
        for diagnostic in diagnostics { diagnosticHandler?(diagnostic) }
        if let temporariesLeft {
            Self.removeTemporariesLater(in: temporariesLeft, store: storeName, diagnosticHandler: diagnosticHandler)
        }
        if heldBusy { retryHeldLater() }
        // Folded into the files once the lock is free: that is part of the take-aways, not new I/O.
        if !intents.isEmpty { whenStoreLockFree(after: 0) {} }
        if let remoteLayer, !remoteIntents.isEmpty {
            let fileSystem = FileSystem.current
            DispatchQueue.global(qos: .utility).async {
                FileSystem.$current.withValue(fileSystem) {
                    _ = AtomicFile.withLock(of: remoteLayer.url, waitingAtMost: nil) {}
                }
            }
        }
    }

    /// The intents not folded yet into the state file `store` keeps (none for a store that is not a file), read
    /// once; why one of a newer version waits among them, if one does (one naming no state file counts: this
    /// version cannot fold it, and holds its writes while it waits); and the report of each intent of the directory
    /// skipped or cut because it names a file it may not or carries a record that gives.
    static func pendingIntents(
        for store: any FeatureStore
    ) -> (
        intents: [TakeAwayIntent], newer: PrivacyManagerDiagnostic.StoredStateError?,
        ignored: [PrivacyManagerDiagnostic]
    ) {
        guard let file = store.recordFile else { return ([], nil, []) }
        let location = FileLocation(file: file)
        let stateFile = location.components[0]
        let pending = IntentJournal.pendingFiles(in: location.anchor)
        let files = pending.files
        let newer = files.first { !$0.intent.isReadable && ($0.intent.stateFile ?? stateFile) == stateFile }
        return (
            files.map(\.intent).filter { $0.stateFile == stateFile },
            newer.map {
                .unsupportedIntentVersion(
                    file: location.anchor + "/" + IntentJournal.directoryName + "/" + $0.name,
                    found: $0.intent.version, supported: TakeAwayIntent.currentVersion)
            },
            pending.ignored.map { .intentIgnored(file: $0.file, reason: $0.reason) }
        )
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
            update(defersTakeAway: true) { $0.rules.setEffective(newValue) }
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
    /// process holds; the save follows (see "Take-aways apply first" in the type's documentation). On a
    /// ``FileFeatureStore`` the call writes its change unflushed and returns; the flush is made off the caller's
    /// thread (``synchronize()`` waits for it; see "Flushed off the caller's thread").
    public func disableFeatures(_ features: Feature) {
        update(defersTakeAway: true) { $0.rules.decide(enable: [], disable: features) }
    }

    /// Turns `enable` on and `disable` off in one atomic change of the local layer: one save, one notification.
    ///
    /// What a settings screen that saves several toggles at once calls: observers and other processes see the set
    /// before or after, never half of it, and flags in neither set keep whatever value they have (unlike the
    /// ``enabledFeatures`` setter, which writes back the whole set it read). For a change in one direction, call
    /// ``enableFeatures(_:)`` or ``disableFeatures(_:)``. A flag in both sets ends up disabled: when two decisions
    /// disagree, the gate fails closed. What it takes away is visible to ``isEnabled(_:)`` before the call returns,
    /// as with ``disableFeatures(_:)``.
    public func updateFeatures(enable: Feature = [], disable: Feature = []) {
        update(defersTakeAway: true) { $0.rules.decide(enable: enable, disable: disable) }
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
    ///
    /// With `isCommittedByLedger` (a consent edge whose record was just appended to the file ledger, under the same
    /// hold of the directory's lock), the save leaves its rename to the directory's next flush when the change is the
    /// only one unsaved and both the stored state and this process record a ledger point: the flushed ledger line is
    /// the commit point, and a power loss that undoes the rename leaves a state that lags the ledger, whose tail the
    /// next start replays (``AtomicFile/isCommittedElsewhere``, ``AtomicFile/Durability/dataOnly``).
    ///
    /// With `defersTakeAway` (the app's own decisions: ``disableFeatures(_:)``, ``updateFeatures(enable:disable:)``,
    /// the ``enabledFeatures`` setter), a change that only takes away is recorded as an unflushed intent instead of
    /// being saved here, and the flusher saves it off the caller's thread (``synchronize()``).
    func update<Result>(
        isSavedElsewhere: Bool = false, isCommittedByLedger: Bool = false, defersTakeAway: Bool = false,
        _ body: (inout State) -> Result
    ) -> Result {
        let outcome:
            (
                result: Result, deliver: Bool, diagnostic: PrivacyManagerDiagnostic?,
                deferred: [PrivacyManagerDiagnostic]?
            ) = state.withLock { state in
                let before = state.rules.record
                let result = body(&state)
                let after = state.rules.record
                // Take-aways first: visible to every check before anything is written or waited for.
                let deliverEarly = takesAway(state) && publish(&state)
                var diagnostic: PrivacyManagerDiagnostic?
                var deferred: [PrivacyManagerDiagnostic]?
                if isSavedElsewhere {
                    state.saved = state.saved.merging(changeFrom: before, to: after)
                } else if state.rules.isHoldingWrites {
                    if after != before {
                        diagnostic = AtomicFile.$lockWait.withValue(.zero) { retryHeldRecord(&state) }
                    }
                } else if after != before && after != state.base {
                    // (Back to what was saved, after a failed save: the store holds it, nothing to write.)
                    // A change that only takes away is an unflushed intent here, flushed off this thread.
                    if defersTakeAway && !isCommittedByLedger { deferred = deferTakeAway(&state) }
                    if deferred == nil {
                        let committed = isCommittedByLedger && before == state.base && state.ledgerLength != nil
                        diagnostic = AtomicFile.$lockWait.withValue(.zero) {
                            AtomicFile.$isCommittedElsewhere.withValue(committed) {
                                save(
                                    from: state.base, to: after, ledgerLength: state.ledgerLength,
                                    owed: &state.owedPurges)
                            }
                        }
                        if diagnostic == nil {
                            state.saved = after
                            state.deferred = nil
                        }
                    }
                }
                return (result, publish(&state) || deliverEarly, diagnostic, deferred)
            }
        if let deferred = outcome.deferred {
            for diagnostic in deferred { diagnosticHandler?(diagnostic) }
        }
        if let diagnostic = outcome.diagnostic {
            if diagnostic.isLockBusy {
                saveWhenLockFree()
            } else {
                diagnosticHandler?(diagnostic)
                if diagnostic.isFailedWrite { retryFailedSaveLater() }
            }
        }
        if outcome.deliver { deliverPending() }
        // The flusher starts once the observers the change reached on this thread are done: what they write (an
        // identifier's reset, a purge) does not wait behind it for the lock.
        if outcome.deferred != nil { requestFlush() }
        return outcome.result
    }

    /// Whether the state's effective set lacks something the gate shows now.
    private func takesAway(_ state: State) -> Bool {
        !state.effective.isSubset(of: state.rules.effective)
    }
}

// MARK: - State

extension PrivacyManager {
    struct State {
        /// The layers and the rules that change them.
        var rules: GateRules
        /// The record as this process last read or saved it: what differs from it is this process's to save.
        var saved: FeatureStateRecord
        /// While writes are held: `saved` with the take-aways made durable as intents since (``IntentJournal``), so
        /// each take-away is recorded once.
        var intended: FeatureStateRecord?
        /// The take-aways recorded as intents on the caller's thread, unflushed, that no save under the store's lock
        /// has taken in since (``deferTakeAway(_:)``): the store holds them once its lock's next holder folds them.
        var deferred: TakeAwayIntent?
        /// How many take-aways were deferred so far: a flush pass clears `deferred` only when none came meanwhile.
        var deferrals: UInt64 = 0
        /// The flusher of take-aways deferred off the caller's thread (`requestFlush`, `synchronize()`).
        var flush = FlushQueue()
        /// How far into the consent ledger this process's consent changes reached (``FeatureStateRecord/ledgerLength``):
        /// saved with the next save.
        var ledgerLength: Int?
        /// The kept payload, read at start-up or applied since.
        var remoteRecord: RemoteLayerRecord?
        /// The payload in force whose save found the lock held by another holder: kept once it is free, unless a
        /// newer payload replaces it first.
        var unkeptRemoteRecord: RemoteLayerRecord?
        /// The flags whose subsystems owe a purge, as the store last recorded them (read at start-up, after each
        /// save and each reload): ``FeatureStateRecord/purgeOwedFeatures``.
        var owedPurges: Feature = []
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

        /// What the store holds once the intents recorded so far are folded: `saved` with the deferred take-aways.
        /// Every save is a change from this, so the fold that precedes it under the lock and the save agree.
        var base: FeatureStateRecord {
            guard let deferred else { return saved }
            var record = deferred.applied(to: saved)
            record.purgeOwedFeatures = saved.purgeOwedFeatures
            return record
        }

        init(rules: GateRules) {
            self.rules = rules
            self.saved = rules.record
            self.effective = rules.effective
        }
    }
}

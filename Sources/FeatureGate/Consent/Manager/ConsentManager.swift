import Foundation

/// Per-category consent on top of a ``PrivacyManager``, with an audit trail.
///
/// Each category has a ``ConsentStatus``. Consent acts on the gate in two ways (see ``ConsentPolicy``):
/// - **It permits.** A feature that categories map is in the gate's effective set only while every one of them
///   allows processing (granted, by default). Features no category maps are always permitted.
/// - **Each change is an edge of its category only.** A grant decides the category's features on for the app,
///   whatever the configuration enabled (by default `analytics` maps analytics and tags and attributes, so granting
///   it turns both on), a denial or restriction decides them off, and unknown returns them to the configuration.
///   Nothing else changes: granting one category never turns on a feature it does not map.
///
/// Every change appends a ``ConsentRecord`` to the ledger first. At start-up the statuses are derived from the
/// ledger (the last change of each category wins; a grant made under an older policy version, or in a ledger with
/// entries that cannot be decoded, reads as ``ConsentStatus/unknown``) and from the refusals the gate state kept:
/// a refusal recorded in either survives a relaunch. The ledger is not replayed: start-up asks it for the trail
/// folded, which a ``FileConsentLedger`` reads from its checkpoint and the
/// lines after it, so a launch costs the same however long the trail. Start-up derives the permitted set and writes
/// nothing; it never writes grants into the app's decisions. Right after, off the caller's thread, the manager reads
/// the bytes the checkpoint covers once and checks them against the digest it recorded; when they differ (or it
/// recorded none), the whole trail is folded and its statuses replace the checkpoint's as a catch-up applies them
/// (``ConsentDiagnostic/ledgerCheckpointMismatch(ledger:)`` when they differed). ``waitForLedgerVerification()``
/// waits for that check.
///
/// Answers age: ``ConsentPolicy/decision(for:answer:context:now:)`` judges each category against the clock, the
/// region, the child mark and the Global Privacy Control signal (``context``). Every call made at time `t` sees
/// the world at `t`: an answer whose lifetime ran out reads ``ConsentStatus/expired``, the gate withholds what it
/// no longer permits, and an `expired` record (source ``ConsentSource/appDefault``) goes into the ledger. Call
/// ``refresh()`` when the app comes to the foreground, or at ``nextExpiry``, so the gate follows the clock.
///
/// It is an actor so consent changes, and the feature updates they cause, are applied one at a time in order.
/// Attach one consent manager per privacy manager. Give the privacy manager the policy
/// (``PrivacyManager/init(configuration:store:catalog:consentPolicy:remoteLayer:diagnosticHandler:)``) so that no opt-in
/// category's features run before this attaches; otherwise create this right after it.
public actor ConsentManager {
    /// The privacy manager the consent is applied to.
    public nonisolated let privacy: PrivacyManager
    /// The mapping from categories to features, and its version.
    public nonisolated let policy: ConsentPolicy
    /// What went wrong reading the ledger at start-up, if anything.
    public nonisolated let startupDiagnostics: [ConsentDiagnostic]

    let ledger: any ConsentLedger
    let now: @Sendable () -> Date
    nonisolated let observers = LockedValue<ConsentObservers>(ConsentObservers())
    /// The last answer of each category (never `expired`: expiry is judged from it).
    var answers: [ConsentCategory: ConsentAnswer]
    /// Where the user is, whether a child, whether a GPC signal is on.
    public internal(set) var context: ConsentContext
    /// A region the app gave that would loosen the rules: it takes effect at the next launch.
    public internal(set) var pendingRegion: ConsentRegion?
    /// What each source last answered for each category, from the ledger and this run (``applyAnswer(_:for:source:)``).
    var lastAnswers: [SourceAnswer: ConsentStatus]
    /// Records not in the ledger yet, oldest first: remembered source answers the ledger refused, and changes held
    /// while another process kept the data directory's lock. Each is appended before the next record, so the ledger's
    /// order stays the order things happened.
    var pending: [PendingRecord] = []
    /// The categories whose held refusal is durable as an intent that no holder of the lock has folded yet: in
    /// force, and kept over what other writers appended before it.
    var durableRefusals: Set<ConsentCategory> = []
    /// The refusals recorded without the lock (``deferRefusal(_:)``) whose record this manager has not read back
    /// from the ledger yet: what other writers appended before it is older, what follows it is newer.
    var deferredRecords: [ConsentCategory: ConsentRecord] = [:]
    /// Whether the check of the checkpoint start-up read folded the whole ledger instead (the checkpoint disagreed or
    /// recorded no digest), and no record has been appended from that fold since: a refusal is then recorded under
    /// the lock, whose append writes the checkpoint from this manager's fold, not from the one on disk.
    var isCheckpointRefolded = false
    /// Whether a retry of the held changes waits for another process's lock: later changes are held behind them
    /// without waiting again.
    var isWaitingForLock = false
    /// Where a start's read of the ledger ended, when its replay of the tail after the gate state's point found the
    /// lock busy: replayed by the retry of held changes, first (``retryHeld(delay:)``).
    var owedReplay: Int?
    /// Refusals only the gate state kept (their ledger append failed), so what outside sources answered after
    /// them may be lost too; see ``applyAnswer(_:for:source:)``. A category leaves once the ledger records a change.
    var refusalsMissingFromLedger: Set<ConsentCategory>
    /// What the ledger itself says of each category of ``refusalsMissingFromLedger`` (its last record's status, or
    /// `unknown`): the previous status of the refusal ``setStatus(_:for:source:)`` records for it.
    var ledgerStatusesOfMissingRefusals: [ConsentCategory: ConsentStatus] = [:]
    /// The outside sources whose answer for a category of ``refusalsMissingFromLedger`` was taken as its memory.
    var anchoredAnswers: Set<SourceAnswer> = []
    /// The ledger as this manager last read it (`nil` when it could not be read): where ``catchUpWithLedger()`` and
    /// the next append continue from.
    var ledgerSnapshot: ConsentLedgerSnapshot?
    nonisolated let diagnosticHandler: (@Sendable (ConsentDiagnostic) -> Void)?
    /// The check of the checkpoint start-up trusted, while it runs and after (`nil` when there was none).
    nonisolated let ledgerVerification = LockedValue<Task<[ConsentDiagnostic], Never>?>(nil)

    /// Reads the ledger and the gate's stored refusals, derives the current statuses and attaches them to `privacy`.
    ///
    /// - Parameters:
    ///   - privacy: The gate whose features the consent controls.
    ///   - policy: Categories, their features, and the policy version: by default the gate's
    ///     ``PrivacyManager/consentPolicy``, or ``ConsentPolicy/default`` when the gate was given none.
    ///   - ledger: The audit trail; nothing is written to it until a status changes or an answer expires.
    ///   - region: Where the user is, as the app knows it (from its server or its consent platform), or `nil`.
    ///   - isChild: Whether the app marks the user as a child.
    ///   - now: The clock stamped on records and against which lifetimes run.
    ///   - diagnosticHandler: Called with every ``ConsentDiagnostic``: those of start-up (also in
    ///     ``startupDiagnostics``) during `init`, and what the check of the ledger's checkpoint finds after it.
    public init(
        privacy: PrivacyManager,
        policy: ConsentPolicy? = nil,
        ledger: any ConsentLedger,
        region: ConsentRegion? = nil,
        isChild: Bool = false,
        now: @escaping @Sendable () -> Date = { Date() },
        diagnosticHandler: (@Sendable (ConsentDiagnostic) -> Void)? = nil
    ) {
        precondition(
            policy == nil || privacy.consentPolicy == nil || policy == privacy.consentPolicy,
            "the consent manager's policy differs from the one its gate was created with")
        let policy = policy ?? privacy.consentPolicy ?? .default
        self.privacy = privacy
        self.policy = policy
        self.ledger = ledger
        self.now = now
        self.diagnosticHandler = diagnosticHandler

        var diagnostics: [ConsentDiagnostic] = []
        var trail = ConsentTrail(ConsentLedgerContents(records: []))
        var snapshot: ConsentLedgerSnapshot?
        var trustedCheckpoint: ConsentLedgerTrustedCheckpoint?
        // The refusals of intents not folded yet, read before the ledger: a fold (another process's, or the gate's
        // own at start) appends an intent's records before it deletes the intent, so each is in one read or the other.
        let intended = Self.pendingIntentRecords(ledger: ledger, store: privacy.store)
        do {
            // The trail folded: a file ledger reads its checkpoint and only the lines after it.
            let reading = try ledger.readTrail(after: nil)
            snapshot = reading.snapshot
            trustedCheckpoint = reading.trustedCheckpoint
            trail = reading.snapshot.trail
            if trail.unreadableEntries > 0 {
                diagnostics.append(
                    .ledgerHasUnreadableEntries(ledger: String(describing: ledger), count: trail.unreadableEntries))
            }
        } catch {
            diagnostics.append(.ledgerUnreadable(ledger: String(describing: ledger), error: error))
        }
        // Refusals another process made durable while the lock was busy, not folded into the ledger yet: they
        // follow the ledger's records, as the fold will append them.
        if !intended.isEmpty { trail.fold(ConsentLedgerContents(records: intended)) }
        // The ledger is the commit point: records after the point the gate state reflects were committed, and
        // their categories read as the ledger says, whatever refusal the state kept from before them.
        let tail = Self.recordsAfterGateState(
            ledger: ledger, stored: privacy.ledgerPointAtStart, end: snapshot?.position?.offset)
        let replayed = Set(tail.map(\.category))
        let ledgerStatuses = trail.answers.mapValues(\.status)
        let fromGate = trail.mergeRefusals(
            privacy.storedConsentRefusals.subtracting(replayed), policyVersion: policy.version)
        for category in fromGate.sortedByName() {
            diagnostics.append(.refusalMissingFromLedger(category: category))
        }

        var lastAnswers: [SourceAnswer: ConsentStatus] = [:]
        for (source, categories) in trail.sourceAnswers {
            for (category, status) in categories {
                lastAnswers[SourceAnswer(source: source, category: category)] = status
            }
        }
        let context = ConsentContext(
            region: region, isChild: isChild, isGlobalPrivacyControlOn: trail.isGlobalPrivacyControlOn)
        self.answers = trail.answers
        self.lastAnswers = lastAnswers
        self.refusalsMissingFromLedger = fromGate
        self.ledgerStatusesOfMissingRefusals = Dictionary(
            uniqueKeysWithValues: fromGate.map { ($0, ledgerStatuses[$0] ?? .unknown) })
        self.ledgerSnapshot = snapshot
        self.context = context
        self.startupDiagnostics = diagnostics
        privacy.setConsentDecisions(
            policy: policy, decisions: policy.decisions(answers: trail.answers, context: context, now: now()))
        // Once the tail is replayed, the gate reflects the file ledger to the end read: noted, so that whatever
        // this process saves first (a flag turned on, before any consent change) records it. A state saved with no
        // point reads as one an earlier version wrote, and a kill between this process's first grant's record and
        // its gate state would leave that grant unreplayed (consent granted, its features off).
        var replaysLater = false
        if let end = snapshot?.position?.offset, !tail.isEmpty, privacy.hadRecordAtStart {
            // Replayed into the gate state under the directory's lock, from the point the state records then: it
            // completes changes a killed process committed. The state and the ledger were read without the lock, so
            // another process may have saved a newer change of the same category since (its record after the tail,
            // its state past it): replayed from the reading, the tail's older record would undo it.
            let decisions = policy.decisions(answers: trail.answers, context: context, now: now())
            let answers = trail.answers
            var replayed = 0
            // (Typed as the retry of held changes types it, so the lock's code is not compiled once more.)
            let locked = privacy.withStoreLockHeld(waitingAtMost: AtomicFile.lockWaitBound) { () -> (any Error)? in
                replayed = Self.replayTail(
                    of: ledger, to: end, into: privacy, answers: answers, policy: policy, decisions: decisions)
                return nil
            }
            if locked != nil {
                if replayed > 0 {
                    diagnostics.append(.gateStateBehindLedger(ledger: String(describing: ledger), records: replayed))
                }
            } else {
                // Another process keeps the lock: replayed once it is free, before the changes made meanwhile (held
                // behind it, as behind held changes). Until then this process notes no point past the state's, so
                // nothing it saves meanwhile claims the tail; the consent layer (the trail, folded above) refuses
                // what the tail refuses.
                owedReplay = end
                isWaitingForLock = true
                replaysLater = true
            }
        } else {
            if privacy.ledgerPointAtStart != nil, ledger is FileConsentLedger, let snapshot {
                privacy.noteLedgerLength(snapshot.position?.offset ?? 0)
            }
            if !tail.isEmpty, let end = snapshot?.position?.offset {
                // With no gate state at all, only in memory (start-up creates no file): the next change saves it
                // with them.
                let decisions = policy.decisions(answers: trail.answers, context: context, now: now())
                privacy.noteLedgerLength(end)
                let before = privacy.currentRecord
                for category in replayed.sortedByName() {
                    privacy.applyConsentEdge(
                        category, edge: trail.answers[category]?.status ?? .unknown, policy: policy,
                        decisions: decisions, isSavedElsewhere: true)
                }
                if privacy.currentRecord != before {
                    diagnostics.append(.gateStateBehindLedger(ledger: String(describing: ledger), records: tail.count))
                }
            }
        }
        for diagnostic in diagnostics { diagnosticHandler?(diagnostic) }
        if let trustedCheckpoint { verifyLater(trustedCheckpoint, of: ledger) }
        if replaysLater { retryHeldLater(after: 0.01) }
    }

    /// Replays into the gate state the ledger's records after the point the stored state records now, up to `end`
    /// (what start-up read): each category they change takes the status `answers` gives it (the trail start-up
    /// folded, or, replayed later by the retry of held changes, the answers as they stand then), saved as any change
    /// is. Called with the data directory's lock held, so the point and the records are
    /// read as no other process can change them. Returns how many records were replayed.
    static func replayTail(
        of ledger: any ConsentLedger, to end: Int, into privacy: PrivacyManager,
        answers: [ConsentCategory: ConsentAnswer], policy: ConsentPolicy,
        decisions: [ConsentCategory: ConsentDecision]
    ) -> Int {
        let point = privacy.storedLedgerPoint()
        let tail = recordsAfterGateState(ledger: ledger, stored: point, end: end)
        privacy.noteLedgerLength(end)
        let before = privacy.currentRecord
        for category in Set(tail.map(\.category)).sortedByName() {
            privacy.applyConsentEdge(
                category, edge: answers[category]?.status ?? .unknown, policy: policy, decisions: decisions)
        }
        return privacy.currentRecord != before ? tail.count : 0
    }

    /// The records of `ledger` after the point the gate state reflects (`stored`), when it is before `end` (where
    /// the read of the ledger ended); none when the state records no point (an earlier version wrote it) or the
    /// ledger is not a file.
    static func recordsAfterGateState(ledger: any ConsentLedger, stored: Int?, end: Int?) -> [ConsentRecord] {
        guard let ledger = ledger as? FileConsentLedger, let stored, let end, stored < end
        else { return [] }
        let bytes = try? AtomicFile.withOpenedFile(
            ledger.location, limit: FileConsentLedger.maximumFileSize
        ) {
            (file) throws(FileStoreError) -> Data in
            guard let file, end <= file.size else { return Data() }
            return try file.read(stored..<end)
        }
        return ConsentRecordLine.lines(of: bytes ?? Data()).compactMap(ConsentRecordLine.decode)
    }

    /// The records of the intents not folded yet into `ledger` (those the ledger already holds left out).
    static func pendingIntentRecords(ledger: any ConsentLedger, store: any FeatureStore) -> [ConsentRecord] {
        guard let ledger = ledger as? FileConsentLedger, store.recordFile != nil else { return [] }
        let location = ledger.location
        let records = IntentJournal.pending(in: location.anchor).filter { $0.ledgerFile == location.components[0] }
            .flatMap(\.records)
        return IntentJournal.recordsNotInLedger(records, ledger: location)
    }

    // MARK: - Reading

    /// The status of `category`: `unknown` when never set or stale, `expired` when its answer's lifetime ran out.
    public func status(for category: ConsentCategory) -> ConsentStatus {
        decision(for: category).status
    }

    /// The status of every category of the policy, and of any other category that has a status.
    public var allStatuses: [ConsentCategory: ConsentStatus] {
        decisions.mapValues(\.status)
    }

    /// How the policy judges `category` now: status, permission, when and by whom it was decided, when it expires,
    /// whether to ask again and why, and what blocks it.
    public func decision(for category: ConsentCategory) -> ConsentDecision {
        noticeExpiries()
        return policy.decision(for: category, answer: answers[category], context: context, now: now())
    }

    /// ``decision(for:)`` for every category of the policy and every other category that has an answer.
    public var decisions: [ConsentCategory: ConsentDecision] {
        noticeExpiries()
        return currentDecisions()
    }

    /// Whether the app has to ask about `category`: never asked, stale, expired, or an outside source's answer is
    /// missing (``ConsentDecision/askReason`` says which).
    public func needsPrompt(for category: ConsentCategory) -> Bool {
        decision(for: category).needsAsking
    }

    /// The policy's categories the app still has to ask about, sorted by name.
    public var categoriesNeedingPrompt: [ConsentCategory] {
        policy.categories.filter { needsPrompt(for: $0) }
    }

    /// The categories whose last grant was made under an older policy version (or cannot be trusted because the
    /// ledger is damaged). They read as unknown; ask again.
    public var staleCategories: [ConsentCategory] {
        decisions.values.filter { $0.askReason == .policyVersionChanged }.map(\.category).sortedByName()
    }

    /// The next instant an answer expires, or `nil` when none will: schedule a ``refresh()`` then.
    public var nextExpiry: Date? {
        decisions.values.filter { $0.status != .expired }.compactMap(\.expiresAt).min()
    }

    // MARK: - Answers

    /// Sets the status of `category`, records it, and updates the features: a decision someone made.
    ///
    /// Use this for the user's choice in the app's consent screen (``ConsentSource/user``), the app's own default
    /// (``ConsentSource/appDefault``), or a migration. For a source the app reads again and again (App Tracking
    /// Transparency, a consent platform, a server), use ``applyAnswer(_:for:source:)``, which decides only when
    /// that source's answer changes, so its repeated answer never undoes a later decision.
    ///
    /// The change is an edge of `category` only: a grant decides its features on, a denial or restriction decides
    /// them off, unknown returns them to the configuration; the permitted set follows. Setting the status a
    /// category already has records nothing and changes nothing; so does setting ``ConsentStatus/expired``, which
    /// is not an answer. A new answer restarts the category's lifetime.
    ///
    /// A refusal (denied, restricted) takes effect first: its features are off for
    /// ``PrivacyManager/isEnabled(_:)`` before the ledger is written and before anything another process holds is
    /// waited for. A grant takes effect once it is recorded.
    ///
    /// With a ``FileConsentLedger`` in the gate's data directory, a refusal makes no flush and takes no lock on the
    /// caller's thread: it writes its record as an unflushed intent (a kill of the process right after keeps it) and
    /// returns; the gate's flusher appends the record and saves the gate state off the caller's thread. Call
    /// ``PrivacyManager/synchronize()`` where a power loss must not take it back.
    ///
    /// Otherwise (a grant, unknown, a refusal over another ledger or behind changes that wait), the record and the
    /// gate state it decides are written in one hold of the data directory's lock. When another process keeps that
    /// lock for more than 100 ms (stopped in a debugger, suspended, on a slow disk), the call does not wait: the
    /// change is held and recorded once the lock is free, in order with the changes made meanwhile (which are held
    /// behind it without waiting), and the error says so (``ConsentRecordingError/isHeld``,
    /// ``ConsentDiagnostic/changesHeld(ledger:)``). A held refusal is in force at once; a held grant (or unknown)
    /// applies once recorded. A held refusal is on disk before the call returns (an intent the lock's next holder folds
    /// into the ledger); a held grant lives in memory: a process killed before the lock is free loses it.
    ///
    /// - Returns: The record appended (or, for a refusal written as an intent, to be appended by the flusher), or
    ///   `nil` when nothing changed.
    /// - Throws: ``ConsentRecordingError`` when the ledger refuses the record or it is held. A denial (any status but
    ///   `granted`) is applied anyway; a grant is not.
    @discardableResult
    public func setStatus(
        _ status: ConsentStatus,
        for category: ConsentCategory,
        source: ConsentSource
    ) throws(ConsentRecordingError) -> ConsentRecord? {
        noticeExpiries()
        // A refusal a revoke-all cut short kept in the gate state, which the ledger lacks, is recorded when refused
        // again (finishing the revocation does), so the ledger and the gate agree again.
        let intended = intendedStatus(for: category)
        let previous = status == intended ? ledgerStatusOfMissingRefusal(category, status) ?? intended : intended
        guard status != .expired, previous != status else { return nil }
        let record = ConsentRecord(
            category: category,
            previousStatus: previous,
            newStatus: status,
            time: now(),
            policyVersion: policy.version,
            source: source
        )
        // A refusal closes its features before the ledger is written or its lock waited for.
        let closing = status.isRefusal ? privacy.catalog.mask(policy.features[category] ?? []) : []
        privacy.beginWithholding(closing)
        defer { privacy.endWithholding(closing) }
        // A refusal is written for the operating system and returns; the flusher records it (issue 47, item 1).
        if status.isRefusal, deferRefusal(record) { return record }
        // The record and the gate state it decides are written under one hold of the data directory's lock.
        let outcome = underLock(takesAway: status.isRefusal) { () -> Result<ConsentRecord, ConsentRecordingError> in
            // The edge is made over the gate state as it is now, not as this process last read it: another
            // process's change saved since counts, so this change is a change of it.
            privacy.reloadStoredState()
            do {
                try append(record)
            } catch  where AtomicFile.isLockBusy(error) {
                return .failure(hold(record))
            } catch {
                if status != .granted { apply(record, isRecorded: false) }
                return .failure(
                    ConsentRecordingError(record: record, applied: status != .granted, underlying: error))
            }
            apply(record, isRecorded: true)
            return .success(record)
        }
        return try (outcome ?? .failure(hold(record))).get()
    }

    /// Calls `handler` after every applied status change, until the returned token is cancelled or released.
    ///
    /// Changes arrive in the order they were applied, once each, and only changes applied after registration.
    /// An answer noticed to have expired arrives as a change to ``ConsentStatus/expired`` (source
    /// ``ConsentSource/appDefault``, previous status the answer that expired). The handler runs synchronously on
    /// the manager's executor, after the features were updated: keep it short, and hop to another task to call
    /// back into the manager. Read ``allStatuses`` for the statuses at registration. Once
    /// ``ObservationToken/cancel()`` returns, the handler is never called again (a call under way on another
    /// thread is waited for).
    public nonisolated func observe(_ handler: @escaping @Sendable (ConsentChange) -> Void) -> ObservationToken {
        let observed = ObservedHandler(handler)
        let id = observers.withLock { observers in
            observers.nextID += 1
            observers.handlers.append((observers.nextID, observed))
            return observers.nextID
        }
        return ObservationToken(stopping: observed) { [observers] in
            // Returned, so the handler is released after the lock (see `PrivacyManager.observe`).
            _ = observers.withLock { observers in
                observers.handlers.firstIndex { $0.id == id }.map { observers.handlers.remove(at: $0) }
            }
        }
    }

    /// Denies every category of the policy (and every other category that has a status).
    ///
    /// - Returns: The records appended, one per category that was not already denied.
    /// - Throws: The first ``ConsentRecordingError``; every denial is applied regardless.
    @discardableResult
    public func denyAll(source: ConsentSource) throws(ConsentRecordingError) -> [ConsentRecord] {
        try recordEach(allStatuses.keys.sortedByName()) { (category) throws(ConsentRecordingError) in
            try setStatus(.denied, for: category, source: source)
        }
    }

    /// Makes `change` for each of `items`, in order, going on after one throws: returns the records appended, or
    /// throws the first error once every change was made.
    func recordEach<Item>(
        _ items: [Item], _ change: (Item) throws(ConsentRecordingError) -> ConsentRecord?
    ) throws(ConsentRecordingError) -> [ConsentRecord] {
        var records: [ConsentRecord] = []
        var firstError: ConsentRecordingError?
        for item in items {
            do throws(ConsentRecordingError) {
                if let record = try change(item) { records.append(record) }
            } catch {
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
        return records
    }

    /// Applies what an outside source (App Tracking Transparency, a consent platform, a server) now answers for
    /// `category`, if that answer changed since the source last answered, even in an earlier run.
    ///
    /// Use this for a source the app reads again and again (at launch, on foreground, on every change of a CMP's
    /// keys); use ``setStatus(_:for:source:)`` for a decision someone made once (the user in the app's consent
    /// screen, the app's default, a migration). An unchanged answer is not a decision: a person who said no in the
    /// app stays at no while the source keeps saying yes, across relaunches. A changed answer is applied like
    /// ``setStatus(_:for:source:)``, except that:
    /// - `unknown` (the source has no answer: its keys are cleared, malformed or half-written) is not an answer: it
    ///   changes nothing, records nothing, and is not remembered, so the next valid answer is compared with the
    ///   last valid one. `expired` reads as `unknown`.
    /// - when the category already has that status, a record with the same previous and new status is appended, so
    ///   the ledger keeps what the source last said.
    ///
    /// What a source said is remembered even when the ledger refuses its record (a denial applied anyway, or a
    /// confirmation): the record is appended before the next one that goes into the ledger, so no later decision
    /// is undone by the source repeating itself. Should every append fail until the app quits, the refusal after
    /// it survives in the gate state but what the source said is lost; so, for a category whose refusal only the
    /// gate state holds, each outside source's first answer that is not a refusal is taken as its memory (recorded
    /// like a confirmation) rather than as a decision. That fails closed: the refusal stands until the user decides
    /// again or the source changes after that.
    ///
    /// - Returns: The record appended, or `nil` when nothing was recorded.
    /// - Throws: ``ConsentRecordingError`` when the ledger refuses the record; a refused grant is tried again at
    ///   the next call with the same answer.
    @discardableResult
    public func applyAnswer(
        _ answer: ConsentStatus,
        for category: ConsentCategory,
        source: ConsentSource
    ) throws(ConsentRecordingError) -> ConsentRecord? {
        noticeExpiries()
        let key = SourceAnswer(source: source, category: category)
        guard answer != .unknown, answer != .expired, answer != lastAnswers[key] else { return nil }
        let current = intendedStatus(for: category)
        let isAnchor =
            refusalsMissingFromLedger.contains(category) && !answer.isRefusal && !anchoredAnswers.contains(key)
        guard current != answer && !isAnchor else {
            // Nothing changes, but the ledger keeps what the source said, for the next run: a record with the same
            // previous and new status changes no answer when the ledger is read.
            lastAnswers[key] = answer
            anchoredAnswers.insert(key)
            let record = ConsentRecord(
                category: category, previousStatus: answer, newStatus: answer, time: now(),
                policyVersion: policy.version, source: source)
            try recordRemembered(record)
            return record
        }
        do {
            let record = try setStatus(answer, for: category, source: source)
            lastAnswers[key] = answer
            return record
        } catch {
            if error.isHeld {
                // Held: remembered, and recorded (a grant applied) once the lock is free.
                lastAnswers[key] = answer
            } else if error.applied {
                // Applied though unrecorded: remembered, and recorded before the next record.
                lastAnswers[key] = answer
                pending.append(PendingRecord(record: error.record, awaits: .nothing))
            }
            throw error
        }
    }

    /// Renamed ``applyAnswer(_:for:source:)``: one label for the source in both ways to set a status.
    @available(*, deprecated, renamed: "applyAnswer(_:for:source:)")
    @discardableResult
    public func applyAnswer(
        _ answer: ConsentStatus,
        for category: ConsentCategory,
        from source: ConsentSource
    ) throws(ConsentRecordingError) -> ConsentRecord? {
        try applyAnswer(answer, for: category, source: source)
    }

    /// The whole audit trail as JSON Lines, oldest first, for a data-subject or compliance request.
    public func exportAuditTrail() throws -> Data {
        try ledger.exportJSONLines()
    }

    /// The decoded audit trail, oldest first.
    public func records() throws -> [ConsentRecord] {
        try ledger.load().records
    }
}

/// The registered ``ConsentManager/observe(_:)`` callbacks, in registration order.
struct ConsentObservers {
    var nextID: UInt64 = 0
    var handlers: [(id: UInt64, handler: ObservedHandler<ConsentChange>)] = []
}

/// A source's answer for a category, as ``ConsentManager/applyAnswer(_:for:source:)`` remembers it.
struct SourceAnswer: Hashable {
    var source: ConsentSource
    var category: ConsentCategory
}

import Foundation

/// Something the consent layer noticed about its ledger and worked around, failing closed.
public enum ConsentDiagnostic: Sendable, CustomStringConvertible {
    /// The ledger could not be read at start-up: every category starts as unknown.
    case ledgerUnreadable(ledger: String, error: any Error)
    /// Some ledger entries could not be decoded: grants are treated as unknown until asked again.
    case ledgerHasUnreadableEntries(ledger: String, count: Int)
    /// The gate state keeps a refusal that the ledger lacks (its append failed): the category reads as denied.
    case refusalMissingFromLedger(category: ConsentCategory)
    /// The checkpoint start-up read did not match the ledger, as found after start-up: the bytes it covers are not
    /// the ones it digested (a record rewritten in place, a byte corrupted), or, for a checkpoint of an earlier
    /// version, they fold to something else. The whole ledger was folded, and its result replaced the checkpoint's.
    case ledgerCheckpointMismatch(ledger: String)
    /// The ledger could not be read to check the checkpoint start-up read: what start-up read stands.
    case ledgerCheckpointUnchecked(ledger: String, error: any Error)
    /// Another process kept the data directory's lock past the bound (100 ms): consent changes are
    /// held in memory and recorded, with the gate state they decide, once it is free. A held refusal is in force
    /// meanwhile; a held grant (or unknown) applies once recorded.
    case changesHeld(ledger: String)
    /// A held change could not be recorded once the lock was free: a refusal stays applied (the gate state keeps
    /// it), a grant was not applied.
    case heldChangeNotRecorded(ConsentRecordingError)

    /// One line saying what happened and what the manager did.
    public var description: String {
        switch self {
        case .ledgerUnreadable(let ledger, let error):
            "\(ledger): cannot read the consent ledger (\(error)); every category starts as unknown"
        case .ledgerHasUnreadableEntries(let ledger, let count):
            "\(ledger): \(count) consent ledger entr\(count == 1 ? "y" : "ies") cannot be decoded; "
                + "grants read as unknown until asked again"
        case .refusalMissingFromLedger(let category):
            "the gate state records a refusal of \(category) that the consent ledger lacks; \(category) reads as denied"
        case .ledgerCheckpointMismatch(let ledger):
            "\(ledger): the consent ledger's checkpoint does not match the ledger; the whole ledger was folded and "
                + "its statuses applied"
        case .ledgerCheckpointUnchecked(let ledger, let error):
            "\(ledger): cannot read the consent ledger to check its checkpoint (\(error)); the statuses read at "
                + "start-up stand"
        case .changesHeld(let ledger):
            "\(ledger): another process holds the data directory's lock; consent changes are held and recorded once "
                + "it is free (refusals apply now, grants then)"
        case .heldChangeNotRecorded(let error):
            "a held consent change could not be recorded: \(error)"
        }
    }
}

/// A consent change could not be recorded in the audit trail.
public struct ConsentRecordingError: Error, Sendable, CustomStringConvertible {
    /// The record that was not appended.
    public let record: ConsentRecord
    /// Whether the status change was applied anyway. Denials are (they only take features away); grants are
    /// not, because a grant without a trail cannot be proven.
    public let applied: Bool
    /// The ledger's error.
    public let underlying: any Error
    /// Whether the record is held because another process kept the data directory's lock: it is recorded once the
    /// lock is free, in order with the changes made meanwhile, and a held grant applies then
    /// (``ConsentDiagnostic/changesHeld(ledger:)``).
    public let isHeld: Bool

    init(record: ConsentRecord, applied: Bool, underlying: any Error, isHeld: Bool = false) {
        self.record = record
        self.applied = applied
        self.underlying = underlying
        self.isHeld = isHeld
    }

    /// What failed and what the manager did.
    public var description: String {
        guard !isHeld else {
            return "\(record.category) \(record.previousStatus) -> \(record.newStatus) is held until the data "
                + "directory's lock is free; " + (applied ? "applied now" : "applied once recorded")
        }
        return "cannot record \(record.category) \(record.previousStatus) -> \(record.newStatus) (\(underlying)); "
            + (applied ? "applied anyway" : "not applied")
    }
}

/// Per-category consent on top of a ``PrivacyManager``, with an audit trail.
///
/// Each category has a ``ConsentStatus``. Consent acts on the gate in two ways (see ``ConsentPolicy``):
/// - **It permits.** A feature that categories map is in the gate's effective set only while every one of them
///   allows processing (granted, by default). Features no category maps are always permitted.
/// - **Each change is an edge of its category only.** A grant decides the category's features on for the app, a
///   denial or restriction decides them off, and unknown returns them to the configuration. Nothing else changes:
///   granting one category never turns on a feature it does not map.
///
/// Every change appends a ``ConsentRecord`` to the ledger first. At start-up the statuses are derived from the
/// ledger (the last change of each category wins; a grant made under an older policy version, or in a ledger with
/// entries that cannot be decoded, reads as ``ConsentStatus/unknown``) and from the refusals the gate state kept:
/// a refusal recorded in either survives a relaunch. The ledger is not replayed: start-up asks it for the trail
/// folded (``ConsentLedger/readTrail(after:)``), which a ``FileConsentLedger`` reads from its checkpoint and the
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

    private let ledger: any ConsentLedger
    private let now: @Sendable () -> Date
    private nonisolated let observers = LockedValue<ConsentObservers>(ConsentObservers())
    /// The last answer of each category (never `expired`: expiry is judged from it).
    private var answers: [ConsentCategory: ConsentAnswer]
    /// Where the user is, whether a child, whether a GPC signal is on.
    public private(set) var context: ConsentContext
    /// A region the app gave that would loosen the rules: it takes effect at the next launch.
    public private(set) var pendingRegion: ConsentRegion?
    /// What each source last answered for each category, from the ledger and this run (``applyAnswer(_:for:source:)``).
    private var lastAnswers: [SourceAnswer: ConsentStatus]
    /// Records not in the ledger yet, oldest first: remembered source answers the ledger refused, and changes held
    /// while another process kept the data directory's lock. Each is appended before the next record, so the ledger's
    /// order stays the order things happened.
    private var pending: [PendingRecord] = []
    /// Whether a retry of the held changes waits for another process's lock: later changes are held behind them
    /// without waiting again.
    private var isWaitingForLock = false
    /// Refusals only the gate state kept (their ledger append failed), so what outside sources answered after
    /// them may be lost too; see ``applyAnswer(_:for:source:)``. A category leaves once the ledger records a change.
    private var refusalsMissingFromLedger: Set<ConsentCategory>
    /// The outside sources whose answer for a category of ``refusalsMissingFromLedger`` was taken as its memory.
    private var anchoredAnswers: Set<SourceAnswer> = []
    /// The ledger as this manager last read it (`nil` when it could not be read): where ``catchUpWithLedger()`` and
    /// the next append continue from.
    private var ledgerSnapshot: ConsentLedgerSnapshot?
    private nonisolated let diagnosticHandler: (@Sendable (ConsentDiagnostic) -> Void)?
    /// The check of the checkpoint start-up trusted, while it runs and after (`nil` when there was none).
    private nonisolated let ledgerVerification = LockedValue<Task<[ConsentDiagnostic], Never>?>(nil)

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
        let fromGate = trail.mergeRefusals(privacy.storedConsentRefusals, policyVersion: policy.version)
        for category in fromGate.sorted() {
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
        self.ledgerSnapshot = snapshot
        self.context = context
        self.startupDiagnostics = diagnostics
        privacy.setConsentDecisions(
            policy: policy, decisions: policy.decisions(answers: trail.answers, context: context, now: now()))
        for diagnostic in diagnostics { diagnosticHandler?(diagnostic) }
        if let trustedCheckpoint { verifyLater(trustedCheckpoint, of: ledger) }
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
        decisions.values.filter { $0.askReason == .policyVersionChanged }.map(\.category).sorted()
    }

    /// The next instant an answer expires, or `nil` when none will: schedule a ``refresh()`` then.
    public var nextExpiry: Date? {
        decisions.values.filter { $0.status != .expired }.compactMap(\.expiresAt).min()
    }

    // MARK: - The clock and the context

    /// Notices every answer that expired since the last call: records an `expired` entry for each and updates the
    /// gate. Call it when the app comes to the foreground, or at ``nextExpiry``; every other call does it too.
    ///
    /// - Returns: The records appended.
    @discardableResult
    public func refresh() -> [ConsentRecord] {
        noticeExpiries()
    }

    /// Says where the user is now. A region whose rule is stricter (or as strict) takes effect at once; one that
    /// would loosen the rules (opt-in to opt-out) takes effect at the next launch, when the app passes it to `init`
    /// (until then it is ``pendingRegion``). A region never turns a refusal into permission.
    public func setRegion(_ region: ConsentRegion?) {
        noticeExpiries()
        let loosens =
            policy.unanswered.rule(for: context.region) == .optIn && policy.unanswered.rule(for: region) == .optOut
        if loosens {
            pendingRegion = region
        } else {
            pendingRegion = nil
            context.region = region
            updateGate()
        }
    }

    /// Marks the user as a child, or unmarks them; takes effect at once. While marked, the policy's
    /// ``ConsentPolicy/childProhibited`` categories are not permitted whatever any grant says. Only the app sets
    /// it: no consent source can.
    public func setChild(_ isChild: Bool) {
        noticeExpiries()
        guard context.isChild != isChild else { return }
        context.isChild = isChild
        updateGate()
    }

    /// Applies a Global Privacy Control signal (from the app's web views, its server, or GPP's US National `Gpc`
    /// field), an outside source of its own (``ConsentSource/gpc``).
    ///
    /// Like every outside answer it decides only when it changes, even across launches (the ledger keeps it): when
    /// it turns on, each ``ConsentPolicy/saleOrSharing`` category is refused, and a grant the user makes later
    /// stands while the signal stays on. Turning off lifts nothing; it is recorded (a `gpc` record of `unknown`,
    /// which changes no status) so that turning on again counts.
    ///
    /// - Returns: The records appended.
    /// - Throws: The first ``ConsentRecordingError``; refusals are applied regardless.
    @discardableResult
    public func applyGlobalPrivacyControl(_ isOn: Bool) throws(ConsentRecordingError) -> [ConsentRecord] {
        noticeExpiries()
        var records: [ConsentRecord] = []
        var firstError: ConsentRecordingError?
        for category in policy.saleOrSharing.sorted() {
            do throws(ConsentRecordingError) {
                if isOn {
                    if let record = try applyAnswer(.denied, for: category, source: .gpc) { records.append(record) }
                } else {
                    let key = SourceAnswer(source: .gpc, category: category)
                    guard lastAnswers[key, default: .unknown] != .unknown else { continue }
                    lastAnswers[key] = .unknown
                    let record = ConsentRecord(
                        category: category, previousStatus: .unknown, newStatus: .unknown, time: now(),
                        policyVersion: policy.version, source: .gpc)
                    try recordRemembered(record)
                    records.append(record)
                }
            } catch {
                firstError = firstError ?? error
            }
        }
        if context.isGlobalPrivacyControlOn != isOn {
            context.isGlobalPrivacyControlOn = isOn
            updateGate()
        }
        if let firstError { throw firstError }
        return records
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
    /// The record and the gate state it decides are written in one hold of the data directory's lock. When another
    /// process keeps that lock for more than 100 ms (stopped in a debugger, suspended, on a slow disk), the call
    /// does not wait: the change is held and recorded once the lock is free, in order with the changes made
    /// meanwhile (which are held behind it without waiting), and the error says so (``ConsentRecordingError/isHeld``,
    /// ``ConsentDiagnostic/changesHeld(ledger:)``). A held refusal is in force at once; a held grant (or unknown)
    /// applies once recorded. A held change lives in memory: a process killed before the lock is free loses it.
    ///
    /// - Returns: The record appended, or `nil` when nothing changed.
    /// - Throws: ``ConsentRecordingError`` when the ledger refuses the record or it is held. A denial (any status but
    ///   `granted`) is applied anyway; a grant is not.
    @discardableResult
    public func setStatus(
        _ status: ConsentStatus,
        for category: ConsentCategory,
        source: ConsentSource
    ) throws(ConsentRecordingError) -> ConsentRecord? {
        noticeExpiries()
        let previous = intendedStatus(for: category)
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
        // The record and the gate state it decides are written under one hold of the data directory's lock.
        let outcome = underLock { () -> Result<ConsentRecord, ConsentRecordingError> in
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
        var records: [ConsentRecord] = []
        var firstError: ConsentRecordingError?
        for category in allStatuses.keys.sorted() {
            do {
                if let record = try setStatus(.denied, for: category, source: source) { records.append(record) }
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

    // MARK: - Applying

    private func currentDecisions() -> [ConsentCategory: ConsentDecision] {
        policy.decisions(answers: answers, context: context, now: now())
    }

    /// Hands the gate the decisions as they stand now; decides no feature.
    private func updateGate() {
        privacy.setConsentDecisions(policy: policy, decisions: currentDecisions())
    }

    /// Records an `expired` entry for each answer whose lifetime ran out since it was last looked at, and updates
    /// the gate. Expiry only takes away, so it applies even when the ledger refuses the record.
    @discardableResult
    private func noticeExpiries() -> [ConsentRecord] {
        let time = now()
        var records: [ConsentRecord] = []
        for (category, answer) in answers.sorted(by: { $0.key < $1.key }) where !answer.isExpiryRecorded {
            let decision = policy.decision(for: category, answer: answer, context: context, now: time)
            guard decision.status == .expired else { continue }
            answers[category]?.isExpiryRecorded = true
            let record = ConsentRecord(
                category: category, previousStatus: answer.status, newStatus: .expired, time: time,
                policyVersion: policy.version, source: .appDefault)
            let isRecorded: Bool
            switch underLock({ Result { try append(record) } }) {
            case .success?:
                isRecorded = true
                records.append(record)
            case .failure(let error)? where !AtomicFile.isLockBusy(error):
                isRecorded = false
            default:
                _ = hold(record)  // Another process keeps the lock: recorded once it is free.
                isRecorded = false
            }
            updateGate()
            notify(
                ConsentChange(
                    category: category, previous: answer.status, current: .expired, source: .appDefault, time: time,
                    isRecorded: isRecorded))
        }
        return records
    }

    /// Appends `record` to the ledger, after the pending records (which go first, so the ledger's order stays the
    /// order things happened). When one of those fails, `record` is not appended either.
    private func append(_ record: ConsentRecord) throws {
        try appendPending()
        try appendToLedger(record)
        if record.previousStatus != record.newStatus { refusalsMissingFromLedger.remove(record.category) }
    }

    /// Appends the pending records, oldest first, each followed by what its change still waits for; stops at the
    /// first one the ledger refuses. Called under the data directory's lock, so each record and the gate state its
    /// change decides are written in one critical section.
    private func appendPending() throws {
        while let first = pending.first {
            try appendToLedger(first.record)
            pending.removeFirst()
            let record = first.record
            if record.previousStatus != record.newStatus { refusalsMissingFromLedger.remove(record.category) }
            guard first.awaits != .nothing else { continue }
            let status = policy.decision(
                for: record.category, answer: answers[record.category], context: context, now: now()
            ).status
            if status == record.newStatus {
                // A held refusal, in force since it was held: its answer and its edge in the gate state.
                answers[record.category] = ConsentAnswer(record, isTrusted: true)
                privacy.applyConsentEdge(
                    record.category, edge: record.newStatus, policy: policy, decisions: currentDecisions())
            } else {
                apply(record, isRecorded: true)
            }
        }
    }

    /// Appends a record of what a source said that changes no status; when the ledger refuses it, it is kept for
    /// the next append (the answer is already remembered), and when another process keeps the lock, it is held.
    private func recordRemembered(_ record: ConsentRecord) throws(ConsentRecordingError) {
        switch underLock({ Result { try append(record) } }) {
        case .success?:
            return
        case .failure(let error)? where !AtomicFile.isLockBusy(error):
            pending.append(PendingRecord(record: record, awaits: .nothing))
            throw ConsentRecordingError(record: record, applied: true, underlying: error)
        default:
            throw hold(record)
        }
    }

    // MARK: - Held for another process's lock

    /// Runs `body` in one hold of the data directory's lock, waited for at most `bound`: `nil` when another process
    /// kept it that long, or when changes are already held for it (this one is held behind them without waiting).
    private func underLock<Result>(
        waitingAtMost bound: Duration = AtomicFile.lockWaitBound, _ body: () -> Result
    ) -> Result? {
        guard !isWaitingForLock else { return nil }
        return privacy.withStoreLockHeld(waitingAtMost: bound, body)
    }

    /// Whether changes wait for a lock another process keeps (see ``setStatus(_:for:source:)``): they are recorded
    /// in the background once it is free. A process about to exit (an app extension, a command-line tool) waits
    /// until this is `false`, or loses them.
    public var isHoldingChanges: Bool { isWaitingForLock }

    /// The status `category` will have once the held changes apply: the newest held change's, else the current one.
    private func intendedStatus(for category: ConsentCategory) -> ConsentStatus {
        pending.last { $0.record.category == category && $0.awaits != .nothing }?.record.newStatus
            ?? status(for: category)
    }

    /// Holds `record` until another process lets go of the data directory's lock: a refusal is in force at once
    /// (the consent layer withholds its features; its edge in the gate state is written with the record), a grant or
    /// unknown applies once recorded, and a record that changes no status waits only to be appended.
    private func hold(_ record: ConsentRecord) -> ConsentRecordingError {
        let changesStatus = record.previousStatus != record.newStatus && record.newStatus != .expired
        let awaits: PendingRecord.Awaiting =
            !changesStatus ? .nothing : record.newStatus.isRefusal ? .refusalEdge : .change
        pending.append(PendingRecord(record: record, awaits: awaits))
        if awaits == .refusalEdge {
            answers[record.category] = ConsentAnswer(record, isTrusted: true)
            updateGate()
            notify(
                ConsentChange(
                    category: record.category, previous: record.previousStatus, current: record.newStatus,
                    source: record.source, time: record.time, isRecorded: false))
        }
        if !isWaitingForLock {
            isWaitingForLock = true
            diagnosticHandler?(.changesHeld(ledger: String(describing: ledger)))
            retryHeldLater(after: 0.01)
        }
        return ConsentRecordingError(
            record: record, applied: awaits != .change, underlying: PrivacyManager.busyError, isHeld: true)
    }

    /// Retries the held changes once the lock is free, from a background thread that waits for it (so no caller
    /// does).
    private nonisolated func retryHeldLater(after delay: Double) {
        privacy.whenStoreLockFree(after: delay) { [weak self] in
            Task { await self?.retryHeld(delay: delay) }
        }
    }

    /// Records the held changes and writes the gate state they decide, in one hold of the lock (tried, not waited
    /// for); while another process keeps it, tries again later. A ledger that refuses them otherwise ends the wait:
    /// a refusal stays applied (and is recorded before the next record), a grant is not applied.
    private func retryHeld(delay: Double) {
        isWaitingForLock = false
        let outcome = underLock(waitingAtMost: .zero) { () -> (any Error)? in
            privacy.reloadStoredState()
            do {
                try appendPending()
                return nil
            } catch {
                return error
            }
        }
        guard let error = outcome ?? PrivacyManager.busyError else { return }
        if AtomicFile.isLockBusy(error) {
            isWaitingForLock = true
            retryHeldLater(after: min(delay * 2, 1))
            return
        }
        var kept: [PendingRecord] = []
        for entry in pending {
            let record = entry.record
            switch entry.awaits {
            case .nothing:
                kept.append(entry)
                continue
            case .refusalEdge:
                privacy.applyConsentEdge(
                    record.category, edge: record.newStatus, policy: policy, decisions: currentDecisions())
                kept.append(PendingRecord(record: record, awaits: .nothing))
            case .change:
                // Not applied; the source's next answer counts again.
                let key = SourceAnswer(source: record.source, category: record.category)
                if lastAnswers[key] == record.newStatus { lastAnswers[key] = nil }
            }
            let failure = ConsentRecordingError(
                record: record, applied: entry.awaits == .refusalEdge, underlying: error)
            diagnosticHandler?(.heldChangeNotRecorded(failure))
        }
        pending = kept
    }

    /// The categories whose held refusal is in force: what other writers appended before it does not change them
    /// (the refusal goes into the ledger after it).
    private var heldRefusals: Set<ConsentCategory> {
        Set(pending.filter { $0.awaits == .refusalEdge }.map(\.record.category))
    }

    /// Takes `record` as the category's answer, applies its edge to the gate and tells the observers. A record
    /// another process appended (`isFromLedger`) is not saved into the gate state again: that process saved it.
    @discardableResult
    private func apply(
        _ record: ConsentRecord, isRecorded: Bool, isTrusted: Bool = true, isFromLedger: Bool = false
    ) -> ConsentChange {
        answers[record.category] = ConsentAnswer(record, isTrusted: isTrusted)
        privacy.applyConsentEdge(
            record.category, edge: record.newStatus, policy: policy, decisions: currentDecisions(),
            isSavedElsewhere: isFromLedger)
        return notify(
            ConsentChange(
                category: record.category,
                previous: record.previousStatus,
                current: record.newStatus,
                source: record.source,
                time: record.time,
                isRecorded: isRecorded
            ))
    }

    @discardableResult
    private func notify(_ change: ConsentChange) -> ConsentChange {
        for handler in observers.withLock({ $0.handlers.map(\.handler) }) { handler.call(change) }
        return change
    }

    // MARK: - Checking the checkpoint

    /// Waits until the checkpoint start-up read has been checked against the ledger, and what the check found is
    /// applied.
    ///
    /// Start-up trusts a ``FileConsentLedger``'s checkpoint as far as its length and last bytes say, so that a launch
    /// costs the same however long the trail. Right after, a task of utility priority reads the bytes the checkpoint
    /// covers once and compares them with the digest the checkpoint recorded; when they differ (a record rewritten
    /// in place, a corrupted byte) or it recorded none (an earlier version wrote it), the whole trail is folded from
    /// its start and its statuses replace the checkpoint's: the gate and the observers follow, as for
    /// ``catchUpWithLedger()``. The check writes nothing. Calls made meanwhile are not held up: a refusal still
    /// applies at once.
    ///
    /// - Returns: What the check found (also handed to the diagnostic handler): nothing when the checkpoint held or
    ///   start-up read every entry.
    @discardableResult
    public nonisolated func waitForLedgerVerification() async -> [ConsentDiagnostic] {
        guard let task = ledgerVerification.withLock({ $0 }) else { return [] }
        return await task.value
    }

    /// Starts the check of `checkpoint`, off the caller's thread and off this actor while the ledger is read.
    private nonisolated func verifyLater(_ checkpoint: ConsentLedgerTrustedCheckpoint, of ledger: any ConsentLedger) {
        let task = Task.detached(priority: .utility) { [weak self] () -> [ConsentDiagnostic] in
            guard self != nil else { return [] }
            let check = Result { () throws -> ConsentLedgerCheckpointCheck in
                if let verifying = ledger as? any ConsentLedgerVerifying {
                    return try verifying.verifyCheckpoint(checkpoint)
                }
                // Another ledger that handed over a file ledger's reading: folded whole, from what it loads.
                let whole = ConsentLedgerSnapshot(trail: ConsentTrail(try ledger.load()))
                return .refolded(ConsentLedgerReading(snapshot: whole, appended: nil), disagrees: false)
            }
            return await self?.apply(check) ?? []
        }
        ledgerVerification.withLock { $0 = task }
    }

    /// Applies what the check of the checkpoint found: a whole fold, with what was appended since on top, is taken
    /// as a catch-up takes a rewritten ledger.
    private func apply(_ check: Result<ConsentLedgerCheckpointCheck, any Error>) -> [ConsentDiagnostic] {
        let name = String(describing: ledger)
        var diagnostics: [ConsentDiagnostic] = []
        switch check {
        case .failure(let error):
            diagnostics.append(.ledgerCheckpointUnchecked(ledger: name, error: error))
        case .success(.holds):
            break
        case .success(.refolded(let whole, let disagrees)):
            var reading = whole
            if whole.snapshot.position != nil, let later = try? ledger.readTrail(after: whole.snapshot),
                later.appended != nil
            {
                reading = later
            }
            ledgerSnapshot = reading.snapshot
            reconcile(with: reading.snapshot.trail)
            if disagrees {
                diagnostics.append(.ledgerCheckpointMismatch(ledger: name))
                let unreadable = reading.snapshot.trail.unreadableEntries
                if unreadable > 0 { diagnostics.append(.ledgerHasUnreadableEntries(ledger: name, count: unreadable)) }
            }
        }
        for diagnostic in diagnostics { diagnosticHandler?(diagnostic) }
        return diagnostics
    }

    // MARK: - Other writers of the ledger

    /// Applies what other writers of the ledger (other processes sharing the data directory, or other managers of
    /// the same ledger) appended since this manager last read it: the statuses, the gate and the observers follow,
    /// as they would for changes made here, and a relaunch would find the same.
    ///
    /// Reads only what was appended since (a ``FileConsentLedger`` reads from where this manager stopped). When the
    /// ledger no longer continues what this manager read (it was replaced, cut or rewritten, or cannot read from a
    /// point), the whole trail is folded again and taken as a relaunch would take it (refusals the gate state keeps
    /// stay), and each category whose answer differs changes. A ledger that cannot be read changes nothing; the
    /// next call tries again. Writes nothing but what the changes decide in the gate state.
    ///
    /// Call it when the ledger may have changed: from the `onLedgerChange` closure of
    /// ``PrivacyManager/watchForChangesFromOtherProcesses(in:watcher:onLedgerChange:)``, and when protected data
    /// becomes available after a launch that could not read the ledger.
    ///
    /// - Returns: The changes applied, in order, as the observers received them.
    @discardableResult
    public func catchUpWithLedger() -> [ConsentChange] {
        guard let reading = try? ledger.readTrail(after: ledgerSnapshot) else { return [] }
        ledgerSnapshot = reading.snapshot
        if let appended = reading.appended { return applyFromLedger(appended) }
        return reconcile(with: reading.snapshot.trail)
    }

    /// Appends `record`. When the ledger returns what other writers appended before it since this manager last
    /// read it, applies that first; otherwise the next ``catchUpWithLedger()`` reads the trail afresh.
    private func appendToLedger(_ record: ConsentRecord) throws {
        let reading = try ledger.append(record, after: ledgerSnapshot)
        guard let reading, let appended = reading.appended else {
            ledgerSnapshot = ledgerSnapshot.map { ConsentLedgerSnapshot(trail: $0.trail) }
            return
        }
        ledgerSnapshot = reading.snapshot
        applyFromLedger(appended)
    }

    /// Applies entries another writer appended, one by one, as ``ConsentTrail/fold(_:)`` folds them.
    @discardableResult
    private func applyFromLedger(_ contents: ConsentLedgerContents) -> [ConsentChange] {
        let isTrusted = (ledgerSnapshot?.trail.unreadableEntries ?? 0) == 0
        let heldRefusals = heldRefusals
        var changes: [ConsentChange] = []
        var isGateStale = false
        for record in contents.records {
            let answer = answers[record.category]
            // Unknown is no answer, except a Global Privacy Control signal going off (as ConsentTrail folds it).
            if record.newStatus != .expired && (record.newStatus != .unknown || record.source == .gpc) {
                lastAnswers[SourceAnswer(source: record.source, category: record.category)] = record.newStatus
            }
            if record.previousStatus != record.newStatus { refusalsMissingFromLedger.remove(record.category) }
            if record.source == .gpc && context.isGlobalPrivacyControlOn != (record.newStatus == .denied) {
                context.isGlobalPrivacyControlOn = record.newStatus == .denied
                isGateStale = true
            }
            guard !heldRefusals.contains(record.category) else { continue }
            if record.newStatus == .expired {
                guard let answer, !answer.isExpiryRecorded else { continue }
                answers[record.category]?.isExpiryRecorded = true
                updateGate()
                changes.append(
                    notify(
                        ConsentChange(
                            category: record.category, previous: answer.status, current: .expired,
                            source: .appDefault, time: record.time, isRecorded: true)))
            } else if ConsentTrail.changesAnswer(record, answer) {
                let status = policy.decision(for: record.category, answer: answer, context: context, now: now()).status
                if status == record.newStatus {
                    // The status it already has: the answer's lifetime restarts; no edge, no change.
                    answers[record.category] = ConsentAnswer(record, isTrusted: isTrusted)
                    isGateStale = true
                } else {
                    changes.append(apply(record, isRecorded: true, isTrusted: isTrusted, isFromLedger: true))
                }
            }
        }
        if contents.unreadableEntries > 0 {
            answers = ConsentTrail.untrusted(answers)
            isGateStale = true
        }
        if isGateStale { updateGate() }
        return changes
    }

    /// Takes `trail`, the whole ledger folded afresh, as a relaunch would (with the refusals the gate state keeps):
    /// each category whose answer's status differs takes it as an edge; each whose status now reads differently
    /// changes.
    private func reconcile(with trail: ConsentTrail) -> [ConsentChange] {
        var trail = trail
        _ = trail.mergeRefusals(privacy.storedConsentRefusals, policyVersion: policy.version)
        let before = answers
        let statusesBefore = currentDecisions().mapValues(\.status)
        let held = heldRefusals
        answers = trail.answers.filter { !held.contains($0.key) }.merging(before.filter { held.contains($0.key) }) {
            $1
        }
        for (source, categories) in trail.sourceAnswers {
            for (category, status) in categories {
                lastAnswers[SourceAnswer(source: source, category: category)] = status
            }
        }
        context.isGlobalPrivacyControlOn = trail.isGlobalPrivacyControlOn
        var changes: [ConsentChange] = []
        for category in Set(before.keys).union(answers.keys).sorted() {
            let answer = answers[category]
            let decisions = currentDecisions()
            if (before[category]?.status ?? .unknown) != (answer?.status ?? .unknown) {
                privacy.applyConsentEdge(
                    category, edge: answer?.status ?? .unknown, policy: policy, decisions: decisions,
                    isSavedElsewhere: true)
            }
            let previous = statusesBefore[category] ?? .unknown
            let current = decisions[category]?.status ?? .unknown
            guard previous != current else { continue }
            changes.append(
                notify(
                    ConsentChange(
                        category: category, previous: previous, current: current,
                        source: answer?.source ?? .appDefault, time: answer?.decidedAt ?? now(), isRecorded: true)))
        }
        updateGate()
        return changes
    }
}

/// The registered ``ConsentManager/observe(_:)`` callbacks, in registration order.
private struct ConsentObservers {
    var nextID: UInt64 = 0
    var handlers: [(id: UInt64, handler: ObservedHandler<ConsentChange>)] = []
}

/// A record not in the ledger yet (see `ConsentManager.pending`), and what of its change waits for it.
private struct PendingRecord {
    enum Awaiting {
        /// Nothing: its change is applied (or it changes no status); it waits only to be appended.
        case nothing
        /// A held refusal, in force in memory: its edge in the gate state is written with it.
        case refusalEdge
        /// A held grant or unknown: the whole change applies once it is appended.
        case change
    }

    var record: ConsentRecord
    var awaits: Awaiting
}

/// A source's answer for a category, as ``ConsentManager/applyAnswer(_:for:source:)`` remembers it.
private struct SourceAnswer: Hashable {
    var source: ConsentSource
    var category: ConsentCategory
}

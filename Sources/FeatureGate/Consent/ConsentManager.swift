import Foundation

/// Something the consent layer noticed about its ledger and worked around, failing closed.
public enum ConsentDiagnostic: Sendable, CustomStringConvertible {
    /// The ledger could not be read at start-up: every category starts as unknown.
    case ledgerUnreadable(ledger: String, error: any Error)
    /// Some ledger entries could not be decoded: grants are treated as unknown until asked again.
    case ledgerHasUnreadableEntries(ledger: String, count: Int)
    /// The gate state keeps a refusal that the ledger lacks (its append failed): the category reads as denied.
    case refusalMissingFromLedger(category: ConsentCategory)

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

    /// What failed and what the manager did.
    public var description: String {
        "cannot record \(record.category) \(record.previousStatus) -> \(record.newStatus) (\(underlying)); "
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
/// ledger (the last record of each category wins; a grant made under an older policy version, or in a ledger with
/// entries that cannot be decoded, reads as ``ConsentStatus/unknown``) and from the refusals the gate state kept:
/// a refusal recorded in either survives a relaunch. Start-up derives the permitted set and writes nothing; it
/// never writes grants into the app's decisions.
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
    private var statuses: [ConsentCategory: ConsentStatus] = [:]
    private var stale: Set<ConsentCategory> = []
    /// What each source last answered for each category, from the ledger and this run (``applyAnswer(_:for:from:)``).
    private var lastAnswers: [SourceAnswer: ConsentStatus]

    /// Reads the ledger and the gate's stored refusals, derives the current statuses and attaches them to `privacy`.
    ///
    /// - Parameters:
    ///   - privacy: The gate whose features the consent controls.
    ///   - policy: Categories, their features, and the policy version: by default the gate's
    ///     ``PrivacyManager/consentPolicy``, or ``ConsentPolicy/default`` when the gate was given none.
    ///   - ledger: The audit trail; nothing is written to it until a status changes.
    ///   - now: The clock stamped on records.
    public init(
        privacy: PrivacyManager,
        policy: ConsentPolicy? = nil,
        ledger: any ConsentLedger,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        precondition(
            policy == nil || privacy.consentPolicy == nil || policy == privacy.consentPolicy,
            "the consent manager's policy differs from the one its gate was created with")
        let policy = policy ?? privacy.consentPolicy ?? .default
        self.privacy = privacy
        self.policy = policy
        self.ledger = ledger
        self.now = now

        var diagnostics: [ConsentDiagnostic] = []
        var statuses: [ConsentCategory: ConsentStatus] = [:]
        var stale: Set<ConsentCategory> = []
        var lastAnswers: [SourceAnswer: ConsentStatus] = [:]
        do {
            let contents = try ledger.load()
            let trustGrants = contents.unreadableEntries == 0
            if !trustGrants {
                diagnostics.append(
                    .ledgerHasUnreadableEntries(ledger: String(describing: ledger), count: contents.unreadableEntries)
                )
            }
            for record in contents.records {
                statuses[record.category] = record.newStatus
                if record.newStatus == .granted && (record.policyVersion < policy.version || !trustGrants) {
                    stale.insert(record.category)
                } else {
                    stale.remove(record.category)
                }
                lastAnswers[SourceAnswer(source: record.source, category: record.category)] = record.newStatus
            }
        } catch {
            diagnostics.append(.ledgerUnreadable(ledger: String(describing: ledger), error: error))
        }
        for category in stale { statuses[category] = .unknown }
        let attached = privacy.attachConsent(policy: policy, ledgerStatuses: statuses)
        for category in attached.refusalsOnlyInGateState.sorted() {
            diagnostics.append(.refusalMissingFromLedger(category: category))
        }
        self.statuses = attached.statuses
        self.stale = stale.subtracting(attached.refusalsOnlyInGateState)
        self.lastAnswers = lastAnswers
        self.startupDiagnostics = diagnostics
    }

    /// The status of `category`; `unknown` when never set or stale.
    public func status(for category: ConsentCategory) -> ConsentStatus {
        statuses[category] ?? .unknown
    }

    /// The status of every category of the policy, and of any other category that has a status.
    public var allStatuses: [ConsentCategory: ConsentStatus] {
        var result = statuses
        for category in policy.categories where result[category] == nil { result[category] = .unknown }
        return result
    }

    /// Whether the app still has to ask about `category`: its status is unknown (never asked, or stale).
    public func needsPrompt(for category: ConsentCategory) -> Bool {
        status(for: category) == .unknown
    }

    /// The policy's categories the app still has to ask about, sorted by name.
    public var categoriesNeedingPrompt: [ConsentCategory] {
        policy.categories.filter { needsPrompt(for: $0) }
    }

    /// The categories whose last grant was made under an older policy version (or cannot be trusted because the
    /// ledger is damaged). They read as unknown; ask again.
    public var staleCategories: [ConsentCategory] {
        stale.sorted()
    }

    /// Sets the status of `category`, records it, and updates the features.
    ///
    /// The change is an edge of `category` only: a grant decides its features on, a denial or restriction decides
    /// them off, unknown returns them to the configuration; the permitted set follows. Setting the status a
    /// category already has records nothing and changes nothing.
    ///
    /// - Returns: The record appended, or `nil` when nothing changed.
    /// - Throws: ``ConsentRecordingError`` when the ledger refuses the record. A denial (any status but
    ///   `granted`) is applied anyway; a grant is not.
    @discardableResult
    public func setStatus(
        _ status: ConsentStatus,
        for category: ConsentCategory,
        source: ConsentSource
    ) throws(ConsentRecordingError) -> ConsentRecord? {
        let previous = self.status(for: category)
        guard previous != status else { return nil }
        let record = ConsentRecord(
            category: category,
            previousStatus: previous,
            newStatus: status,
            time: now(),
            policyVersion: policy.version,
            source: source
        )
        do {
            try ledger.append(record)
        } catch {
            if status != .granted { apply(record, isRecorded: false) }
            throw ConsentRecordingError(record: record, applied: status != .granted, underlying: error)
        }
        apply(record, isRecorded: true)
        return record
    }

    /// Calls `handler` after every applied status change, until the returned token is cancelled or released.
    ///
    /// Changes arrive in the order they were applied, once each, and only changes applied after registration.
    /// The handler runs synchronously on the manager's executor, after the features were updated: keep it short,
    /// and hop to another task to call back into the manager. Read ``allStatuses`` for the statuses at
    /// registration.
    public nonisolated func observe(_ handler: @escaping @Sendable (ConsentChange) -> Void) -> ObservationToken {
        let id = observers.withLock { observers in
            observers.nextID += 1
            observers.handlers.append((observers.nextID, handler))
            return observers.nextID
        }
        return ObservationToken { [observers] in
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

    /// Applies what an outside source (App Tracking Transparency, a consent platform) now answers for
    /// `category`, if that answer changed since the source last answered, even in an earlier run.
    ///
    /// An unchanged answer is not a decision: a person who said no in the app stays at no while the source keeps
    /// saying yes, across relaunches. A changed answer is applied like ``setStatus(_:for:source:)``, except that:
    /// - when the category already has that status, a record with the same previous and new status is appended, so
    ///   the ledger keeps what the source last said;
    /// - `unknown` (the source stopped answering, or its answer cannot be read) never lifts a denial or
    ///   restriction: it is remembered and nothing changes.
    ///
    /// - Returns: The record appended, or `nil` when nothing was recorded.
    /// - Throws: ``ConsentRecordingError`` when the ledger refuses the record; a refused grant is tried again at
    ///   the next call with the same answer.
    @discardableResult
    public func applyAnswer(
        _ answer: ConsentStatus,
        for category: ConsentCategory,
        from source: ConsentSource
    ) throws(ConsentRecordingError) -> ConsentRecord? {
        let key = SourceAnswer(source: source, category: category)
        guard answer != lastAnswers[key, default: .unknown] else { return nil }
        let current = status(for: category)
        guard current != answer else {
            // Nothing changes, but the ledger keeps what the source said, for the next run. Remembered here even
            // if the ledger refuses it: the source's next unchanged answer must not undo a later choice.
            lastAnswers[key] = answer
            let record = ConsentRecord(
                category: category, previousStatus: current, newStatus: answer, time: now(),
                policyVersion: policy.version, source: source)
            do { try ledger.append(record) } catch {
                throw ConsentRecordingError(record: record, applied: true, underlying: error)
            }
            return record
        }
        if answer == .unknown && current.isRefusal {
            lastAnswers[key] = answer
            return nil
        }
        do {
            let record = try setStatus(answer, for: category, source: source)
            lastAnswers[key] = answer
            return record
        } catch {
            if error.applied { lastAnswers[key] = answer }
            throw error
        }
    }

    /// The whole audit trail as JSON Lines, oldest first, for a data-subject or compliance request.
    public func exportAuditTrail() throws -> Data {
        try ledger.exportJSONLines()
    }

    /// The decoded audit trail, oldest first.
    public func records() throws -> [ConsentRecord] {
        try ledger.load().records
    }

    private func apply(_ record: ConsentRecord, isRecorded: Bool) {
        statuses[record.category] = record.newStatus
        stale.remove(record.category)
        privacy.applyConsentEdge(record.category, status: record.newStatus, policy: policy, statuses: statuses)
        let change = ConsentChange(
            category: record.category,
            previous: record.previousStatus,
            current: record.newStatus,
            source: record.source,
            time: record.time,
            isRecorded: isRecorded
        )
        for handler in observers.withLock({ $0.handlers.map(\.handler) }) { handler(change) }
    }
}

/// The registered ``ConsentManager/observe(_:)`` callbacks, in registration order.
private struct ConsentObservers {
    var nextID: UInt64 = 0
    var handlers: [(id: UInt64, handler: @Sendable (ConsentChange) -> Void)] = []
}

/// A source's answer for a category, as ``ConsentManager/applyAnswer(_:for:from:)`` remembers it.
private struct SourceAnswer: Hashable {
    var source: ConsentSource
    var category: ConsentCategory
}

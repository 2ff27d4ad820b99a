import FeatureGate
import Foundation

/// Revoke-all: takes back every consent and every feature, waits until every subsystem has purged its data,
/// resets the anonymous identifier, and optionally asks the server, once, to erase its copy.
///
/// ```swift
/// let directory = PrivacyDataDirectory(url: dataDirectory)
/// let revocation = ConsentRevocation(consent: consent, runtime: runtime, identifier: identifier)
/// let report = await revocation.revokeAll(
///     erasure: ErasureRequest(via: uploads) { id in
///         TransportRequest(method: "POST", path: "/erasure", body: Data((id?.uuidString ?? "").utf8))
///     })
/// ```
///
/// ## What is left on disk
/// If the SDK keeps FeatureGate's files under the names of `PrivacyDataDirectory` and its own data in
/// subsystems that purge it, the data directory holds, afterwards, only
/// - `featuregate-state.json`, the gate's state (every feature off),
/// - `consent-ledger.jsonl`, the consent audit trail, which ends with the revocation's denials, and
/// - `consent-ledger.jsonl.checkpoint`, the trail folded up to its end (what start-up reads instead of the trail).
///
/// The anonymous identifier's file (`anonymous-id`) is deleted, with the temporary files interrupted writes left in
/// its directory (``RevocationReport/removedTemporaryFiles``), and so is everything the subsystems keep (event
/// queue files, caches, registrations): each is stopped and purged, including subsystems that never ran in this
/// process (see ``SubsystemRuntime/settlePurgingStoppedSubsystems()``).
///
/// ## Sending nothing twice
/// The erasure request is owed only when some feature was enabled as the call began (a revocation is then an
/// enabled → disabled edge), and is sent only if the runtime's ``SubsystemRuntime/exitPermit`` can be spent: a
/// second revoke-all, or one made with everything already off, sends nothing. Every attempt carries the same
/// idempotency key (``ErasureRequest/idempotencyKeyHeader``), so the server can drop the duplicates a crash can
/// cause.
///
/// The erasure is owed until the server accepts it (2xx): an error status, a redirect (never followed) or no
/// answer leaves it owed for the next call or start, which sends it again, not before a `Retry-After` the server
/// gave; a 4xx rejection is a failure of the revocation. See <doc:ServersThatFail>.
///
/// ## After a crash
/// Revoke-all records that it began before it changes anything (`PrivacyManager.pendingRevocation`, kept in the
/// gate's state). If the process dies at any point after that, the next start finishes it before any subsystem
/// starts, with no new call: the gate reads as revoked from its first check, ``SubsystemRuntime/start()`` purges
/// every registered subsystem (files from earlier runs included) before it starts any, and
/// `AnonymousIdentifier` deletes its file and the temporary files beside it when it is created. Only the erasure
/// request needs the app: hand its transport over at start-up with
/// ``finishPendingRevocation(source:erasure:)``, which also returns the report of what it finished:
///
/// ```swift
/// runtime.start()
/// if let report = await revocation.finishPendingRevocation(erasure: erasure) {
///     log(report)  // a revocation a killed process began, finished now
/// }
/// ```
///
/// The identifier to erase is kept only in the pending record, and only until the erasure request was sent.
///
/// ## Bounded, whatever hangs
/// A backend, an inner transport or a subsystem may hang. `revokeAll` waits at most ``deadline`` for the
/// subsystems to settle; then it cancels the subsystem call under way (typically a stop waiting on an upload or
/// an opt-out request) and the runtime moves on to the purge; it waits at most ``deadline`` again, cancelling
/// whatever is still running, and reports what it could not finish. The erasure request gets ``deadline`` too.
/// So it returns within 3 × ``deadline`` plus the time of its local file operations (the consent ledger, the
/// identifier file), and ``RevocationReport/cancelled`` lists what it cancelled. No file operation waits long for a
/// lock another process keeps on the data directory: the pending record and the consent denials wait at most 100 ms,
/// then are kept beside the lock and recorded once it is free; the identifier's file and the record of what was
/// finished do not wait at all. What could not be done then is reported in ``RevocationReport/failures`` and stays
/// owed in the pending record: it is done in the background once the lock is free, or by the next start.
///
/// Thread safety: `revokeAll` may be called from any task; concurrent calls may both purge, but at most one
/// sends the erasure request.
public struct ConsentRevocation: Sendable {
    /// The consent whose categories are denied.
    public let consent: ConsentManager
    /// The runtime whose subsystems are stopped and purged; it must follow the same gate as ``consent``.
    public let runtime: SubsystemRuntime
    /// The identifier that is reset.
    public let identifier: AnonymousIdentifier
    /// How long each waiting step may take before what is in flight is cancelled (see "Bounded, whatever hangs").
    public let deadline: Duration
    private let sleep: @Sendable (Duration) async -> Void
    /// Called as revoke-all reaches each ``RevocationStep``: kill tests stop the process there.
    package var stepObserver: (@Sendable (RevocationStep) -> Void)?
    /// The wall clock a `Retry-After` is measured on (tests set their own).
    package var now: @Sendable () -> Date = { Date() }

    /// Ties the revocation to the SDK's consent, runtime and anonymous identifier. Does nothing else.
    ///
    /// - Parameters:
    ///   - consent: The consent whose categories are denied.
    ///   - runtime: The runtime whose subsystems are stopped and purged.
    ///   - identifier: The anonymous identifier that is reset.
    ///   - deadline: How long each waiting step may take; `revokeAll` returns within 3 × `deadline` plus its
    ///     local file operations. The default is 2 seconds.
    ///   - sleep: Waits for a duration; the deadline's only notion of time (tests inject their own).
    /// - Precondition: `consent` and `runtime` share one `PrivacyManager`; `deadline` is positive.
    public init(
        consent: ConsentManager,
        runtime: SubsystemRuntime,
        identifier: AnonymousIdentifier,
        deadline: Duration = .seconds(2),
        sleep: @escaping @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) }
    ) {
        precondition(consent.privacy === runtime.privacy, "consent and runtime must share one PrivacyManager")
        precondition(deadline > .zero, "the deadline must be positive")
        self.consent = consent
        self.runtime = runtime
        self.identifier = identifier
        self.deadline = deadline
        self.sleep = sleep
    }

    /// Denies every category, disables every feature, waits until every subsystem has stopped and purged, resets
    /// the anonymous identifier and, if asked, sends one erasure request.
    ///
    /// In order:
    /// 1. it records that it began (`PrivacyManager.pendingRevocation`): one write of the gate's state, under the
    ///    data directory's lock, that disables every feature, refuses every category of the policy (and any other
    ///    with a status) and keeps the erasure request's idempotency key and the identifier to erase. From here
    ///    on, a process killed at any instruction leaves a revocation the next start finishes (see "After a
    ///    crash");
    /// 2. every such category is denied through the consent manager, recorded with `source`, the granted ones
    ///    first, so the audit trail has the revocation;
    /// 3. the runtime settles: running subsystems are stopped (each may send its own one-shot opt-out) and
    ///    purged, and stopped subsystems not known to be clean are purged too;
    /// 4. the anonymous identifier is deleted (without being read), then the temporary files that interrupted writes
    ///    left in its directory;
    /// 5. `erasure`, if given and owed, is sent with the idempotency key in its
    ///    ``ErasureRequest/idempotencyKeyHeader`` header (see ``ErasureOutcome``);
    /// 6. the pending revocation is removed, or keeps what is left to do (an erasure that was not sent, a step
    ///    that failed) for the next start.
    ///
    /// It never throws: a step that fails is reported in ``RevocationReport/failures`` and the others still run,
    /// because a revocation that stops half-way would leave data behind.
    ///
    /// - Parameters:
    ///   - source: Who revoked, recorded in the audit trail; `ConsentSource.user` unless a server or migration
    ///     did.
    ///   - erasure: The erasure request to send, or `nil` for none.
    /// - Returns: What was recorded, disabled, purged, reset and sent.
    public func revokeAll(source: ConsentSource = .user, erasure: ErasureRequest? = nil) async -> RevocationReport {
        let privacy = runtime.privacy
        var report = RevocationReport()
        // The local set, looking past the remote kill switch: revoking what the user had enabled is an edge even
        // while a server has it switched off.
        let enabledBefore = privacy.reasons().filter(\.isLocallyEnabled).reduce(into: Feature()) {
            $0.formUnion($1.feature)
        }
        // Read before anything is disabled: the identifier deletes itself when the last feature goes off. An
        // unreadable file is not reported here: deleting it below fails too, and that is reported.
        let subject = try? identifier.stored()
        // Before anything goes off: the runtime may stop and purge as soon as the first feature does, and the
        // report must have every purge the revocation caused, however early.
        let mark = runtime.lastEventSequence
        // An erasure an earlier call still owes is sent again now, with its own permit: it was earned then.
        let earlier = privacy.pendingRevocation
        step(.beginning)

        let categories = Set(await consent.allStatuses.keys).union(consent.policy.features.keys)
        let (pending, error) = privacy.beginRevocation(
            PendingRevocation(anonymousIdentifier: subject, isErasureOwed: erasure != nil && !enabledBefore.isEmpty),
            refusing: categories)
        if let error { report.failures.append(.revocationNotRecorded(error)) }
        step(.recorded)

        let (records, errors) = await consent.denyEveryCategory(source: source)
        report.consentRecords = records
        report.failures += errors.map { .consentNotRecorded($0) }
        // Bits outside the catalog are never enabled (the gate masks them), so the catalog is everything.
        privacy.disableFeatures(privacy.catalog.allFeatures)
        report.disabledFeatures = enabledBefore
        step(.consentRecorded)

        // Only if this call joined that very record: one that another call finished meanwhile is no debt.
        let owedBefore = earlier?.isErasureOwed == true && earlier?.requestKey == pending.requestKey
        let permit = owedBefore ? OneShotPermit(armed: true) : runtime.exitPermit
        await finish(pending, erasure: erasure, permit: permit, recorded: error == nil, since: mark, into: &report)
        return report
    }

    /// Finishes the revoke-all that a killed process left unfinished, if the gate's store records one
    /// (`PrivacyManager.pendingRevocation`), and returns its report; `nil` when there is none.
    ///
    /// Call it once at start-up, after creating the consent manager, the runtime (with its subsystems registered)
    /// and the anonymous identifier, with the erasure request built on your transport: it is the only part of the
    /// finish that needs the app. The rest happens without it: the gate reads as revoked from its first check,
    /// ``SubsystemRuntime/start()`` purges every subsystem before it starts one, and `AnonymousIdentifier`
    /// deletes its file when it is created. This call does what is still left: it records the denials the
    /// consent ledger may lack, purges and deletes again what was not confirmed, sends the erasure request if one
    /// is owed (with the same idempotency key as every earlier attempt, so the server can drop duplicates), and
    /// removes the pending record. An erasure that cannot be sent now stays owed, with its identifier, until a
    /// later call sends it.
    ///
    /// - Parameters:
    ///   - source: Who revoked, recorded with the denials the ledger lacked.
    ///   - erasure: The erasure request, as given to the interrupted ``revokeAll(source:erasure:)``; `nil` to send
    ///     none now.
    /// - Returns: What was finished, with ``RevocationReport/resumed`` set; `nil` when nothing was pending.
    public func finishPendingRevocation(
        source: ConsentSource = .user, erasure: ErasureRequest? = nil
    ) async -> RevocationReport? {
        guard let pending = runtime.privacy.pendingRevocation else { return nil }
        let mark = runtime.lastEventSequence
        var report = RevocationReport()
        report.resumed = true
        let (records, errors) = await consent.denyEveryCategory(source: source)
        report.consentRecords = records
        report.failures += errors.map { .consentNotRecorded($0) }
        // The pending record is the permit: the erasure it owes was earned by what ran before the kill.
        await finish(
            pending, erasure: erasure, permit: OneShotPermit(armed: true), recorded: true, since: mark, into: &report)
        return report
    }

    /// Steps 3 to 6 of revoke-all: purge, identifier, erasure, and what of the pending record is done. `recorded`
    /// says whether the gate's state holds `pending` (it was written, or read from there). `mark` is the runtime's
    /// journal position as the call began: every stop and purge after it is in the report.
    private func finish(
        _ pending: PendingRevocation, erasure: ErasureRequest?, permit: OneShotPermit, recorded: Bool,
        since mark: UInt64,
        into report: inout RevocationReport
    ) async {
        report.requestKey = pending.requestKey
        let settling = Task { [runtime] in await runtime.settlePurgingStoppedSubsystems() }
        if await Abandonable.value(of: settling, within: deadline, sleep: sleep) == nil {
            if let cancelled = runtime.cancelCallInFlight() { report.cancelled.append(cancelled) }
            if await Abandonable.value(of: settling, within: deadline, sleep: sleep) == nil {
                let cancelled = runtime.cancelCallInFlight()
                if let cancelled { report.cancelled.append(cancelled) }
                report.failures.append(.subsystemsNotSettled(stillRunning: cancelled))
            }
        }
        report.purges = Self.merged(runtime.purges(after: mark))
        report.stoppedSubsystems = Self.stopped(runtime.events(after: mark))
        let purged = report.totalPurged.failures.isEmpty && !report.failures.contains { $0.isSettling }
        step(.subsystemsPurged)

        // Another process's lock is not waited for: the identifier is forgotten at once (never handed out again) and
        // its file's deletion is owed, like the purges: the pending record, durable since the call began, says so
        // until it is done, here in the background once the lock is free, or by the next start.
        var lockSeenBusy = false
        let identifierDeleted = AtomicFile.$lockWait.withValue(.zero) { () -> Bool in
            var deleted = true
            do {
                report.identifierReset = try identifier.reset() || pending.anonymousIdentifier != nil
            } catch {
                deleted = false
                lockSeenBusy = AtomicFile.isLockBusy(error)
                report.failures.append(.identifierNotReset(error))
            }
            // A write killed before its rename leaves a temporary file (a copy of the identifier, say) beside it.
            if let directory = identifier.url?.deletingLastPathComponent() {
                let removal = AtomicFile.removeTemporaries(in: directory)
                report.removedTemporaryFiles = removal.removed
                report.failures += removal.failures.map { .temporaryFileNotRemoved($0) }
                deleted = deleted && removal.failures.isEmpty
                lockSeenBusy = lockSeenBusy || removal.failures.contains(where: AtomicFile.isLockBusy)
            }
            return deleted
        }
        if lockSeenBusy { identifier.finishRevocationWhenLockFree(pending.requestKey) }
        step(.identifierDeleted)

        // One attempt at a time per revocation in this process: a concurrent call that finds the key claimed, or the
        // erasure no longer owed once it holds the claim, sends nothing. The claim is held until the outcome is
        // recorded, so no call sends what another just had accepted.
        let claimed = erasure != nil && Self.sendingKeys.withLock { $0.insert(pending.requestKey).inserted }
        defer { if claimed { _ = Self.sendingKeys.withLock { $0.remove(pending.requestKey) } } }
        var current = pending
        if let stored = runtime.privacy.pendingRevocation, stored.requestKey == pending.requestKey {
            current = stored
        } else if recorded {
            // The record is gone (or replaced): another call finished it, its erasure included.
            current.isErasureOwed = false
        }
        if erasure != nil, !claimed || (pending.isErasureOwed && !current.isErasureOwed) {
            report.erasure = .refusedNoPermit
        } else if let erasure {
            let sending = Task { [runtime, now, current] in
                await Self.send(erasure, current, permit: permit, runtime, now: now)
            }
            if let outcome = await Abandonable.value(of: sending, within: deadline, sleep: sleep) {
                report.erasure = outcome
            } else {
                sending.cancel()
                report.erasure = .failed(CancellationError())
                report.cancelled.append(CancelledOperation(subsystem: "erasure request", operation: "send"))
            }
        }
        step(.erasureSent)

        var erasureDone = !pending.isErasureOwed || report.erasure.wasSent
        var notBefore: Date?
        if report.erasure.wasSent, current.anonymousIdentifier == nil, let erasure {
            report.failures.append(
                .erasureNamedNoIdentifier(requestsSent: erasure.transport.ledger.totals.transportAllowed))
        }
        switch report.erasure {
        case .nothingToErase: erasureDone = true
        case .rejected(let response):
            // Sending the same request again would be refused again: reported, not retried.
            erasureDone = true
            report.failures.append(.erasureRejected(statusCode: response.statusCode))
        case .retryLater(_, let date?): notBefore = date
        default: break
        }
        let progress: @Sendable (inout PendingRevocation) -> Void = { [erasureDone, notBefore] pending in
            pending.areSubsystemsPurged = pending.areSubsystemsPurged || purged
            pending.isIdentifierDeleted = pending.isIdentifierDeleted || identifierDeleted
            if let notBefore { pending.erasureNotBefore = notBefore }
            if erasureDone { pending.markErasureDone() }
        }
        do {
            // A lock found busy a moment ago is not waited for again: the progress is recorded once it is free.
            try runtime.privacy.updatePendingRevocation(
                key: pending.requestKey, waitingAtMost: lockSeenBusy ? .zero : AtomicFile.lockWaitBound, progress)
        } catch {
            report.failures.append(.revocationNotRecorded(error))
            if AtomicFile.isLockBusy(error) {
                runtime.privacy.updatePendingRevocationWhenLockFree(key: pending.requestKey, progress)
            }
        }
        report.erasureStillOwed = runtime.privacy.pendingRevocation?.isErasureOwed ?? false
        step(.finished)
    }

    private func step(_ step: RevocationStep) { stepObserver?(step) }

    /// The keys of the erasure requests being sent in this process right now.
    private static let sendingKeys = LockedValue<Set<UUID>>([])

    private static func send(
        _ erasure: ErasureRequest,
        _ pending: PendingRevocation,
        permit: OneShotPermit,
        _ runtime: SubsystemRuntime,
        now: @Sendable () -> Date
    ) async -> ErasureOutcome {
        guard pending.isErasureOwed else { return .nothingWasEnabled }
        // A request that would name no one, when nothing was sent either, erases nothing: the receipt says so.
        if pending.anonymousIdentifier == nil && erasure.transport.ledger.totals.transportAllowed == 0 {
            return .nothingToErase
        }
        // The server's Retry-After (kept, capped, in the pending record) holds every attempt back, across starts.
        if let notBefore = pending.erasureNotBefore, now() < notBefore {
            return .waitingForRetryAfter(until: notBefore)
        }
        var request = erasure.makeRequest(pending.anonymousIdentifier)
        request.headers[ErasureRequest.idempotencyKeyHeader] = pending.requestKey.uuidString
        do {
            let response = try await erasure.transport.sendExitRequest(request, permit: permit)
            return .answered(response, now: now())
        } catch {
            switch error {
            // An exit request ignores the gate, so `gateClosed` cannot happen; treat it as a refusal all the same.
            case .permitUnavailable, .gateClosed: return .refusedNoPermit
            case .failed(let underlying): return .failed(underlying)
            }
        }
    }

    /// The subsystems stopped because features went off (not for a shutdown), each once, in the order stopped; and
    /// those whose start, under way when the revocation began, ended in a failure or was cancelled (their purge
    /// follows): a start the revocation cut short stopped the subsystem too.
    private static func stopped(_ events: [LifecycleEvent]) -> [String] {
        var names: [String] = []
        for event in events where !names.contains(event.subsystem) {
            switch event.kind {
            case .stopped(let disabled) where !disabled.isEmpty: names.append(event.subsystem)
            case .startFailed: names.append(event.subsystem)
            default: continue
            }
        }
        return names
    }

    /// One entry per subsystem, in the order of its first purge.
    private static func merged(_ purges: [SubsystemPurge]) -> [SubsystemPurge] {
        var order: [String] = []
        var reports: [String: PurgeReport] = [:]
        for purge in purges {
            if reports[purge.subsystem] == nil { order.append(purge.subsystem) }
            reports[purge.subsystem, default: PurgeReport()].merge(purge.report)
        }
        return order.map { SubsystemPurge(subsystem: $0, report: reports[$0] ?? PurgeReport()) }
    }
}

extension ConsentManager {
    /// Denies every category like `ConsentManager.denyAll(source:)`, in one actor turn, but keeps every record
    /// appended and every ledger error instead of throwing the first.
    fileprivate func denyEveryCategory(
        source: ConsentSource
    ) -> (records: [ConsentRecord], errors: [ConsentRecordingError]) {
        var records: [ConsentRecord] = []
        var errors: [ConsentRecordingError] = []
        // Granted categories first: their features are the ones on, so they go off before any record that changes
        // nothing. (Each denial is an edge of its own category only, so the order cannot switch anything back on.)
        let statuses = allStatuses
        let sorted = statuses.keys.sorted()
        let order = sorted.filter { statuses[$0] == .granted } + sorted.filter { statuses[$0] != .granted }
        for category in order {
            do {
                if let record = try setStatus(.denied, for: category, source: source) { records.append(record) }
            } catch {
                errors.append(error)
            }
        }
        return (records, errors)
    }
}

/// The points revoke-all passes, in order: a kill test stops the process at each and checks what the next start does.
package enum RevocationStep: Int, CaseIterable, Sendable {
    /// Nothing written yet.
    case beginning
    /// The pending revocation is recorded: the gate's state has every feature off and every category refused.
    case recorded
    /// The consent ledger has the denials.
    case consentRecorded
    /// The subsystems have settled and purged.
    case subsystemsPurged
    /// The anonymous identifier and the temporary files beside it are deleted.
    case identifierDeleted
    /// The erasure request went out (or was not owed); the pending record still says it is owed.
    case erasureSent
    /// The pending record is removed (or keeps what is left to do).
    case finished
}

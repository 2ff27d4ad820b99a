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
/// The erasure request is sent only when some feature was enabled as the call began (a revocation is then an
/// enabled → disabled edge) and only if the runtime's ``SubsystemRuntime/exitPermit`` can be spent: a second
/// revoke-all, or one made with everything already off, sends nothing.
///
/// ## Bounded, whatever hangs
/// A backend, an inner transport or a subsystem may hang. `revokeAll` waits at most ``deadline`` for the
/// subsystems to settle; then it cancels the subsystem call under way (typically a stop waiting on an upload or
/// an opt-out request) and the runtime moves on to the purge; it waits at most ``deadline`` again, cancelling
/// whatever is still running, and reports what it could not finish. The erasure request gets ``deadline`` too.
/// So it returns within 3 × ``deadline`` plus the time of its local file operations (the consent ledger, the
/// identifier file), and ``RevocationReport/cancelled`` lists what it cancelled.
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
    /// 1. every category of the policy (and any other with a status) is denied, recorded with `source`, the
    ///    granted ones first, so that what consent had switched on goes off first;
    /// 2. every feature of the gate's catalog is disabled locally, consent-managed or not;
    /// 3. the runtime settles: running subsystems are stopped (each may send its own one-shot opt-out) and
    ///    purged, and stopped subsystems not known to be clean are purged too;
    /// 4. the anonymous identifier is deleted (without being read), then the temporary files that interrupted writes
    ///    left in its directory;
    /// 5. `erasure`, if given, is sent through the runtime's exit permit (see ``ErasureOutcome``).
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
        let mark = runtime.lastEventSequence
        var report = RevocationReport()
        // The local set, looking past the remote kill switch: revoking what the user had enabled is an edge even
        // while a server has it switched off.
        let enabledBefore = privacy.reasons().filter(\.isLocallyEnabled).reduce(into: Feature()) {
            $0.formUnion($1.feature)
        }

        // Read before anything is disabled: the identifier deletes itself when the last feature goes off. An
        // unreadable file is not reported here: deleting it below fails too, and that is reported.
        let subject = try? identifier.stored()

        let (records, errors) = await consent.denyEveryCategory(source: source)
        report.consentRecords = records
        report.failures += errors.map { .consentNotRecorded($0) }

        // Bits outside the catalog are never enabled (the gate masks them), so the catalog is everything.
        privacy.disableFeatures(privacy.catalog.allFeatures)
        report.disabledFeatures = enabledBefore

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

        do {
            let discarded = try identifier.reset()
            report.identifierReset = discarded || subject != nil
        } catch {
            report.failures.append(.identifierNotReset(error))
        }
        // A write killed before its rename leaves a temporary file (a copy of the identifier, say) beside the data.
        if let directory = identifier.url?.deletingLastPathComponent() {
            let removal = AtomicFile.removeTemporaries(in: directory)
            report.removedTemporaryFiles = removal.removed
            report.failures += removal.failures.map { .temporaryFileNotRemoved($0) }
        }

        if let erasure {
            let wasEnabled = !enabledBefore.isEmpty
            let sending = Task { [runtime] in
                await Self.send(erasure, subject: subject, wasEnabled: wasEnabled, runtime)
            }
            if let outcome = await Abandonable.value(of: sending, within: deadline, sleep: sleep) {
                report.erasure = outcome
            } else {
                sending.cancel()
                report.erasure = .failed(CancellationError())
                report.cancelled.append(CancelledOperation(subsystem: "erasure request", operation: "send"))
            }
        }
        return report
    }

    private static func send(
        _ erasure: ErasureRequest,
        subject: UUID?,
        wasEnabled: Bool,
        _ runtime: SubsystemRuntime
    ) async -> ErasureOutcome {
        guard wasEnabled else { return .nothingWasEnabled }
        do {
            return .sent(
                try await erasure.transport.sendExitRequest(erasure.makeRequest(subject), permit: runtime.exitPermit)
            )
        } catch {
            switch error {
            // An exit request ignores the gate, so `gateClosed` cannot happen; treat it as a refusal all the same.
            case .permitUnavailable, .gateClosed: return .refusedNoPermit
            case .failed(let underlying): return .failed(underlying)
            }
        }
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

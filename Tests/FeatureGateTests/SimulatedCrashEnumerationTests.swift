import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// A denial, a disable, a grant and revoke-all's pending record, run on a simulated file system (``SimulatedDisk``
/// behind the file layer's ``FileSystem`` seam) and crashed after every durable step, each crash in every way a power
/// loss could leave the disk (unflushed directory changes applied or not, unflushed bytes dropped, kept, torn or
/// zeroed); with the lock free and with another process stopped holding it. A fresh start on every resulting disk
/// keeps every acknowledged "no", is never wider than before the change, and its ledger and gate state agree.
@Suite struct SimulatedCrashEnumerationTests {
    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])
    static let anchor = "/simulated/data"
    static var data: PrivacyDataDirectory { PrivacyDataDirectory(url: URL(filePath: anchor, directoryHint: .isDirectory)) }

    enum Change: String, CaseIterable, Sendable {
        case denial, disable, grant, revokeAll
    }

    /// What a start on a disk shows.
    struct Seen: Equatable, CustomStringConvertible {
        var analytics: Bool
        var messageCenter: Bool
        var status: ConsentStatus
        var ledgerStatus: ConsentStatus?
        var isRevoking: Bool
        var diagnostics: [String]
        var description: String {
            "analytics \(analytics ? "on" : "off"), messageCenter \(messageCenter ? "on" : "off"), consent \(status), "
                + "ledger says \(ledgerStatus.map { "\($0)" } ?? "nothing"), revoking \(isRevoking), "
                + "diagnostics \(diagnostics)"
        }
    }

    /// Starts a gate and a consent manager on `disk` as a fresh process does, and reads what they decide. A
    /// revocation found pending is finished as far as the ledger goes (its denials recorded), as the stack's start
    /// does (`finishPendingRevocation`).
    static func start(on disk: SimulatedDisk) async -> Seen {
        await FileSystem.$current.withValue(disk.process()) {
            let diagnostics = Collector<ConsentDiagnostic>()
            let (privacy, consent) = launchGateAndConsent(on: data, policy: policy) { diagnostics.append($0) }
            _ = await consent.waitForLedgerVerification()
            if privacy.pendingRevocation != nil { _ = try? await consent.denyAll(source: .user) }
            let ledger = try? FileConsentLedger(url: data.consentLedgerFile).load().records
            return Seen(
                analytics: privacy.isEnabled(.analytics), messageCenter: privacy.isEnabled(.messageCenter),
                status: await consent.status(for: .analytics),
                ledgerStatus: ledger?.last(where: { $0.category == .analytics })?.newStatus,
                isRevoking: privacy.pendingRevocation != nil,
                diagnostics: diagnostics.all.filter { !isExpected($0, revoking: privacy.pendingRevocation != nil) }
                    .map { "\($0)" })
        }
    }

    /// Whether `diagnostic` names the situation correctly: a gate state behind the ledger is one a crash cut short
    /// (replayed at the start); a refusal the ledger lacks, while a revoke-all is pending, is one its finish records.
    static func isExpected(_ diagnostic: ConsentDiagnostic, revoking: Bool) -> Bool {
        switch diagnostic {
        case .gateStateBehindLedger: true
        case .refusalMissingFromLedger: revoking
        default: false
        }
    }

    /// What is wrong with `seen`, a start after `change` crashed (`returned`: after its call returned), from
    /// `before`.
    static func violations(_ seen: Seen, before: Seen, change: Change, returned: Bool) -> [String] {
        var found: [String] = []
        // Never wider than before (a grant may add analytics, nothing else).
        if seen.messageCenter && !before.messageCenter { found.append("messageCenter on, off before") }
        if seen.analytics && !before.analytics && change != .grant { found.append("analytics on, off before") }
        // The ledger and the gate state agree after the start: the trail's last word is the status, and decides.
        if seen.status != (seen.ledgerStatus ?? .unknown) {
            found.append("consent says \(seen.status), the ledger's last record \(String(describing: seen.ledgerStatus))")
        }
        if seen.analytics != (seen.status == .granted) { found.append("analytics on while consent is \(seen.status)") }
        if !seen.diagnostics.isEmpty { found.append("diagnostics \(seen.diagnostics)") }
        guard returned else { return found }
        // An acknowledged "no" survives.
        switch change {
        case .denial:
            if seen.analytics || seen.status != .denied { found.append("the acknowledged denial is lost") }
        case .disable:
            if seen.messageCenter { found.append("the acknowledged disable is lost") }
        case .revokeAll:
            if seen.analytics || seen.messageCenter || !seen.isRevoking {
                found.append("the acknowledged revoke-all is lost")
            }
        case .grant:
            break
        }
        return found
    }

    /// The disk before `change`: analytics granted (denied before a grant), messageCenter on, all of it durable.
    static func prepared(for change: Change) async throws -> SimulatedDisk {
        let disk = SimulatedDisk(directories: [anchor])
        try await FileSystem.$current.withValue(disk.process()) {
            let (privacy, consent) = launchGateAndConsent(on: data, policy: policy)
            try await consent.setStatus(change == .grant ? .denied : .granted, for: .analytics, source: .user)
            privacy.enableFeatures(.messageCenter)
        }
        disk.syncEverything()
        return disk
    }

    /// Runs `change` in a process of `disk` (`held`: while another process is stopped holding the lock), recording
    /// the disk after every durable step.
    static func run(_ change: Change, on disk: SimulatedDisk, held: Bool) async -> [SimulatedDisk.State] {
        await FileSystem.$current.withValue(disk.process()) {
            let (privacy, consent) = launchGateAndConsent(on: data, policy: policy)
            if held { disk.holdLockOutside(anchor + "/" + AtomicFile.lockFileName) }
            disk.startRecording()
            switch change {
            case .denial: _ = try? await consent.setStatus(.denied, for: .analytics, source: .user)
            case .grant: _ = try? await consent.setStatus(.granted, for: .analytics, source: .user)
            case .disable: privacy.disableFeatures(.messageCenter)
            case .revokeAll:
                _ = privacy.beginRevocation(
                    PendingRevocation(anonymousIdentifier: nil, isErasureOwed: false), refusing: [.analytics])
            }
            return disk.stopRecording()
        }
    }

    @Test(arguments: Change.allCases, [false, true])
    func aCrashAtEveryDurableStepKeepsTheAcknowledgedNoAndAgreesWithTheLedger(change: Change, held: Bool) async throws {
        let disk = try await Self.prepared(for: change)
        let before = await Self.start(on: SimulatedDisk(state: disk.snapshot))
        #expect(Self.violations(before, before: before, change: change, returned: false).isEmpty, "\(before)")
        let steps = await Self.run(change, on: disk, held: held)
        // A held grant lives in memory: it writes nothing. Everything else writes.
        #expect((steps.count > 1) != (change == .grant && held), "\(change): \(steps.count - 1) durable steps")
        var explored = 0
        var failures: [String] = []
        for (index, state) in steps.enumerated() {
            for (label, crashed) in SimulatedDisk.crashStates(of: state) {
                explored += 1
                let seen = await Self.start(on: SimulatedDisk(state: crashed))
                let returned = index == steps.count - 1
                for violation in Self.violations(seen, before: before, change: change, returned: returned) {
                    failures.append("\(change) (lock \(held ? "held" : "free")), step \(index) of \(steps.count - 1), \(label): \(violation); \(seen)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(explored) crash states: \(failures.prefix(8))")
        print("SimulatedCrashEnumerationTests: \(change), lock \(held ? "held" : "free"): \(steps.count - 1) durable steps, \(explored) crash states explored")
    }
}

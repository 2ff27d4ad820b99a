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
    static var data: PrivacyDataDirectory {
        PrivacyDataDirectory(url: URL(filePath: anchor, directoryHint: .isDirectory))
    }

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
    /// does (`finishPendingRevocation`); the ledger is read after the intents are folded, as the lock's next holder
    /// folds them.
    static func start(on disk: SimulatedDisk) async -> Seen {
        await FileSystem.$current.withValue(disk.process()) {
            let diagnostics = Collector<ConsentDiagnostic>()
            let (privacy, consent) = launchGateAndConsent(on: data, policy: policy) { diagnostics.append($0) }
            _ = await consent.waitForLedgerVerification()
            if privacy.pendingRevocation != nil { _ = try? await consent.denyAll(source: .user) }
            // The next holder of the lock folds the intents (durable held refusals) into the ledger.
            // (Bounded: behind this process's own background fold, it waits on until that one lets go.)
            _ = AtomicFile.withLock(of: data.stateFile, waitingAtMost: .seconds(5)) {}
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
            found.append(
                "consent says \(seen.status), the ledger's last record \(String(describing: seen.ledgerStatus))")
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
                    failures.append(
                        "\(change) (lock \(held ? "held" : "free")), step \(index) of \(steps.count - 1), \(label): \(violation); \(seen)"
                    )
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(explored) crash states: \(failures.prefix(8))")
        print(
            "SimulatedCrashEnumerationTests: \(change), lock \(held ? "held" : "free"): \(steps.count - 1) durable steps, \(explored) crash states explored"
        )
    }
}

/// Two processes' file-system steps interleaved: a consent denial in process A (analytics granted before) and an
/// enable of push in process B, on one simulated disk. Every schedule "A runs its first i calls, B its first j, then A
/// finishes, then B" (at most two switches), for every i and j, and the reverse order; after each, a fresh start on
/// the disk as it is and on every state a power loss could leave of it keeps A's acknowledged denial, is never wider
/// than before plus B's enable, and its ledger and gate state agree.
@Suite struct SimulatedInterleavingTests {
    typealias Crashes = SimulatedCrashEnumerationTests

    /// Lets the calls of two processes through in the order of `segments` (process, calls; `nil`: the rest). A
    /// `flock`, `dup` or `close` is not a step of its own (it changes no file): it goes with the step before it, so a
    /// bounded lock wait's helper thread is never held up.
    final class Schedule: @unchecked Sendable {
        private let condition = NSCondition()
        private var segments: [(process: Int, calls: Int?)]
        private var finished: Set<Int> = []
        private var counted: [Int: Int] = [:]

        /// How many steps each process made.
        var calls: [Int: Int] {
            condition.lock()
            defer { condition.unlock() }
            return counted
        }

        init(_ segments: [(process: Int, calls: Int?)]) { self.segments = segments }

        func before(_ process: Int, _ call: String) {
            guard !["flock", "dup", "close"].contains(call) else { return }
            condition.lock()
            defer { condition.unlock() }
            while let first = segments.first, first.process != process {
                if finished.contains(first.process) || first.calls == 0 {
                    segments.removeFirst()
                    condition.broadcast()
                } else {
                    condition.wait()
                }
            }
            counted[process, default: 0] += 1
            if let left = segments.first?.calls {
                segments[0].calls = left - 1
                if left - 1 == 0 {
                    segments.removeFirst()
                    condition.broadcast()
                }
            }
        }

        func finish(_ process: Int) {
            condition.lock()
            finished.insert(process)
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Runs A's denial and B's enable on a disk where analytics was granted, under `schedule`; returns the disk.
    static func run(_ schedule: Schedule?) async throws -> SimulatedDisk {
        let disk = try await Crashes.prepared(for: .denial)
        let (a, b) = (disk.process(), disk.process())  // Processes 2 and 3 (1 prepared the disk).
        let (privacyA, consentA) = FileSystem.$current.withValue(a) {
            launchGateAndConsent(on: Crashes.data, policy: Crashes.policy)
        }
        let privacyB = FileSystem.$current.withValue(b) {
            launchGateAndConsent(on: Crashes.data, policy: Crashes.policy).privacy
        }
        if let schedule { disk.beforeCall = { schedule.before($0, $1) } }
        let enabled = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            FileSystem.$current.withValue(b) { privacyB.enableFeatures(.push) }
            schedule?.finish(3)
            enabled.signal()
        }
        await FileSystem.$current.withValue(a) {
            _ = try? await consentA.setStatus(.denied, for: .analytics, source: .user)
        }
        schedule?.finish(2)
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                enabled.wait()
                continuation.resume()
            }
        }
        disk.beforeCall = nil
        #expect(!privacyA.isEnabled(.analytics), "A's denial is not in force in A")
        return disk
    }

    @Test func everyInterleavingOfADenialAndAnEnableKeepsTheDenial() async throws {
        let before = await Crashes.start(on: SimulatedDisk(state: try await Crashes.prepared(for: .denial).snapshot))
        // How many steps each makes alone.
        let alone = Schedule([(2, nil), (3, nil)])
        _ = try await Self.run(alone)
        let (stepsA, stepsB) = (alone.calls[2, default: 0], alone.calls[3, default: 0])
        #expect(stepsA > 0 && stepsB > 0, "A made \(stepsA) steps, B \(stepsB)")
        var schedules: [(String, [(process: Int, calls: Int?)])] = []
        for i in 0...stepsA {
            for j in 1...max(1, stepsB) {
                schedules.append(("A \(i), B \(j), A, B", [(2, i), (3, j), (2, nil), (3, nil)]))
            }
        }
        for j in 0...stepsB {
            schedules.append(("B \(j), A, B", [(3, j), (2, nil), (3, nil)]))
        }
        var explored = 0
        var failures: [String] = []
        // A failing schedule is replayed alone with INTERLEAVING_ONLY="A i, B j, A, B" (its label in the message).
        let only = ProcessInfo.processInfo.environment["INTERLEAVING_ONLY"]
        for (label, segments) in schedules where only == nil || label == only {
            let disk = try await Self.run(Schedule(segments))
            let states = [("as it is", disk.snapshot)] + SimulatedDisk.crashStates(of: disk.snapshot)
            for (crash, state) in states {
                explored += 1
                let seen = await Crashes.start(on: SimulatedDisk(state: state))
                for violation in Crashes.violations(seen, before: before, change: .denial, returned: true) {
                    failures.append("schedule \(label), \(crash): \(violation); \(seen)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(explored) states: \(failures.prefix(8))")
        print(
            "SimulatedInterleavingTests: A \(stepsA) steps, B \(stepsB) steps: \(schedules.count) interleavings, "
                + "\(explored) states explored")
    }
}

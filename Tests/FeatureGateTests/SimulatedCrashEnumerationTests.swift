import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// A denial, a disable, a grant and revoke-all's pending record, run on a simulated file system (``SimulatedDisk``
/// behind the file layer's ``FileSystem`` seam) and crashed after every durable step, each crash in every way a power
/// loss could leave the disk (unflushed directory changes applied or not, unflushed bytes dropped, kept, torn or
/// zeroed), and as a kill of the process leaves it (what it wrote kept); with the lock free and with another process
/// stopped holding it. A fresh start on every resulting disk is never wider than before the change, and its ledger and
/// gate state agree; it keeps the "no" after a kill once the call returned, and after a power loss once the change was
/// flushed: a disable's and a denial's call return before their flush (issue 47, item 1), which `synchronize()` waits
/// for; every other change's flush is made before its call returns.
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
        var push: Bool
        var status: ConsentStatus
        var ledgerStatus: ConsentStatus?
        var isRevoking: Bool
        var diagnostics: [String]
        var description: String {
            "analytics \(analytics ? "on" : "off"), messageCenter \(messageCenter ? "on" : "off"), "
                + "push \(push ? "on" : "off"), consent \(status), "
                + "ledger says \(ledgerStatus.map { "\($0)" } ?? "nothing"), revoking \(isRevoking), "
                + "diagnostics \(diagnostics)"
        }
    }

    /// Starts a gate and a consent manager on `disk` as a fresh process does, and reads what they decide. A
    /// revocation found pending is finished as far as the ledger goes (its denials recorded), as the stack's start
    /// does (`finishPendingRevocation`); the ledger is read after the intents are folded, as the lock's next holder
    /// folds them.
    static func start(on disk: SimulatedDisk) async -> Seen {
        // No schedule holds this process up: its lock waits are real ones (its own background work may hold the lock).
        disk.waitsForLocks = true
        return await FileSystem.$current.withValue(disk.process()) {
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
                push: privacy.isEnabled(.push),
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
    /// `before`; `othersMayAdd`: what another process's "yes", made meanwhile, may have added.
    static func violations(
        _ seen: Seen, before: Seen, change: Change, returned: Bool, othersMayAdd: Feature = []
    ) -> [String] {
        var found: [String] = []
        // Never wider than before, but for what a grant (this one's, or another process's "yes") may add.
        let mayAdd = othersMayAdd.union(change == .grant ? .analytics : [])
        for (feature, name, on, wasOn) in [
            (Feature.analytics, "analytics", seen.analytics, before.analytics),
            (.messageCenter, "messageCenter", seen.messageCenter, before.messageCenter),
            (.push, "push", seen.push, before.push),
        ] where on && !wasOn && !mayAdd.contains(feature) {
            found.append("\(name) on, off before")
        }
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

    /// One process's call: one that waits for nothing but the disk, or one that awaits. Either runs on a thread of
    /// its own, so that a schedule holding it up never blocks a thread of the cooperative pool (two such, in two
    /// tests at once, would leave no thread for what they wait on).
    enum Call: Sendable {
        case blocking(@Sendable () -> Void)
        case awaiting(@Sendable () async -> Void)

        /// Makes the call as the simulated process `fileSystem`, then calls `returned` (a blocking call's on its
        /// thread: a schedule that waits for it to return needs no thread of the pool).
        func make(as fileSystem: FileSystem, then returned: @escaping @Sendable () -> Void = {}) async {
            switch self {
            case .awaiting(let body):
                if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
                    let thread = ThreadExecutor()
                    defer { thread.stop() }
                    await withTaskExecutorPreference(thread) {
                        await FileSystem.$current.withValue(fileSystem) { await body() }
                        returned()
                    }
                } else {
                    await FileSystem.$current.withValue(fileSystem) { await body() }
                    returned()
                }
            case .blocking(let body):
                await withCheckedContinuation { continuation in
                    Thread.detachNewThread {
                        FileSystem.$current.withValue(fileSystem) { body() }
                        returned()
                        continuation.resume()
                    }
                }
            }
        }
    }

    /// `change`, made by the gate `privacy` and its consent manager `consent`.
    static func call(_ change: Change, privacy: PrivacyManager, consent: ConsentManager) -> Call {
        switch change {
        case .denial: .awaiting { _ = try? await consent.setStatus(.denied, for: .analytics, source: .user) }
        case .grant: .awaiting { _ = try? await consent.setStatus(.granted, for: .analytics, source: .user) }
        case .disable: .blocking { privacy.disableFeatures(.messageCenter) }
        case .revokeAll:
            .blocking {
                _ = privacy.beginRevocation(
                    PendingRevocation(anonymousIdentifier: nil, isErasureOwed: false), refusing: [.analytics])
            }
        }
    }

    /// The durable steps of a change, and from which of them on each promise holds.
    struct Run {
        var steps: [SimulatedDisk.State]
        /// The first step after the call returned: from it on, a kill of the process keeps the change.
        var returned: Int
        /// The first step after the change was flushed: from it on, a power loss keeps it too. A disable's and a
        /// denial's call return before (their flush is made off the caller's thread; ``PrivacyManager/synchronize()``
        /// waits for it), every other change's when its call returns.
        var flushed: Int
    }

    /// Runs `change` in a process of `disk` (`held`: while another process is stopped holding the lock, let go once
    /// the call returned), recording the disk after every durable step, through ``PrivacyManager/synchronize()``.
    static func run(_ change: Change, on disk: SimulatedDisk, held: Bool) async -> Run {
        let process = disk.process()
        let (privacy, consent) = FileSystem.$current.withValue(process) {
            launchGateAndConsent(on: data, policy: policy)
        }
        if held { disk.holdLockOutside(anchor + "/" + AtomicFile.lockFileName) }
        disk.startRecording()
        let returned = LockedValue(0)
        await call(change, privacy: privacy, consent: consent).make(as: process) {
            returned.withLock { $0 = disk.recordedCount - 1 }
        }
        guard change == .disable || change == .denial else {
            let steps = disk.stopRecording()
            return Run(steps: steps, returned: steps.count - 1, flushed: steps.count - 1)
        }
        if held { disk.releaseOutsideLock() }
        let synchronized = await FileSystem.$current.withValue(process) { await privacy.synchronize() }
        let flushed = disk.recordedCount - 1
        #expect(synchronized)
        return Run(steps: disk.stopRecording(), returned: returned.withLock { $0 }, flushed: flushed)
    }

    @Test(arguments: Change.allCases, [false, true])
    func aCrashAtEveryDurableStepKeepsTheAcknowledgedNoAndAgreesWithTheLedger(change: Change, held: Bool) async throws {
        // On a thread of its own: its thousands of starts block on the simulated disk, and would hold a thread of
        // the two-thread cooperative pool that other tests wait on.
        try await onAThreadOfItsOwn {
            let disk = try await Self.prepared(for: change)
            let before = await Self.start(on: SimulatedDisk(state: disk.snapshot))
            #expect(Self.violations(before, before: before, change: change, returned: false).isEmpty, "\(before)")
            let run = await Self.run(change, on: disk, held: held)
            let steps = run.steps
            // A held grant lives in memory: it writes nothing. Everything else writes.
            #expect((steps.count > 1) != (change == .grant && held), "\(change): \(steps.count - 1) durable steps")
            var explored = 0
            var failures: [String] = []
            for (index, state) in steps.enumerated() {
                // A power loss: every state the disk could be left in. A kill of the process: the state as it saw it.
                for (label, crashed) in SimulatedDisk.crashStates(of: state) + [("killed", state)] {
                    explored += 1
                    let seen = await Self.start(on: SimulatedDisk(state: crashed))
                    let returned = index >= (label == "killed" ? run.returned : run.flushed)
                    for violation in Self.violations(seen, before: before, change: change, returned: returned) {
                        failures.append(
                            "\(change) (lock \(held ? "held" : "free")), step \(index) of \(steps.count - 1), \(label): \(violation); \(seen)"
                        )
                    }
                }
            }
            #expect(failures.isEmpty, "\(failures.count) of \(explored) crash states: \(failures.prefix(8))")
            print(
                "SimulatedCrashEnumerationTests: \(change), lock \(held ? "held" : "free"): \(steps.count - 1) durable steps (returned after \(run.returned), flushed after \(run.flushed)), \(explored) crash states explored"
            )
        }
    }

    /// A denial made without the lock and flushed by the gate's flusher, then a grant: the denial's intent (on the
    /// disk: another process's flushed intent flushed their folder), deleted once its record and its gate state are
    /// on the disk, must not come back after a power loss and refuse again over the grant, whose gate state is
    /// committed by its ledger line (its rename left to a later flush). Every state a crash at every step of the
    /// grant leaves starts granted once the grant returned, the denial kept before. (The simulated disk drops a
    /// removed folder's unflushed removal as a whole, never bringing back its flushed entries, so it does not show
    /// why the flusher flushes the deletion of intents that held records: a file system that may lose the removal
    /// and keep the entries would.)
    @Test func aFlushedDenialNeverComesBackOverALaterGrant() async throws {
        // On a thread of its own: its thousands of starts block on the simulated disk, and would hold a thread of
        // the two-thread cooperative pool that other tests wait on.
        try await onAThreadOfItsOwn {
            let disk = try await Self.prepared(for: .denial)
            let process = disk.process()
            let (privacy, consent) = FileSystem.$current.withValue(process) {
                launchGateAndConsent(on: Self.data, policy: Self.policy)
            }
            _ = await consent.waitForLedgerVerification()
            // The denial's intent, unflushed, while another process holds the lock; that process's own flushed intent (a
            // disable of push, as behind a busy lock) then puts the denial's on the disk too (the folder is flushed).
            disk.holdLockOutside(Self.anchor + "/" + AtomicFile.lockFileName)
            await Self.call(.denial, privacy: privacy, consent: consent).make(as: process)
            try FileSystem.$current.withValue(disk.process()) {
                let intent = TakeAwayIntent(stateFile: PrivacyDataDirectory.stateFileName, disable: .push)
                _ = try IntentJournal.record(intent, in: Self.anchor)
            }
            disk.releaseOutsideLock()
            #expect(await FileSystem.$current.withValue(process) { await privacy.synchronize() })
            let denied = await Self.start(on: SimulatedDisk(state: disk.snapshot))
            #expect(denied.status == .denied && !denied.analytics, "\(denied)")
            disk.startRecording()
            await Self.call(.grant, privacy: privacy, consent: consent).make(as: process)
            let steps = disk.stopRecording()
            #expect(steps.count > 1, "\(steps.count - 1) durable steps")
            var explored = 0
            var failures: [String] = []
            for (index, state) in steps.enumerated() {
                for (label, crashed) in SimulatedDisk.crashStates(of: state) + [("killed", state)] {
                    explored += 1
                    let seen = await Self.start(on: SimulatedDisk(state: crashed))
                    let returned = index == steps.count - 1
                    for violation in Self.violations(seen, before: denied, change: .grant, returned: returned) {
                        failures.append("step \(index) of \(steps.count - 1), \(label): \(violation); \(seen)")
                    }
                    if returned && seen.status != .granted {
                        failures.append("step \(index), \(label): the acknowledged grant is lost; \(seen)")
                    }
                    if !returned && seen.status != .denied && seen.status != .granted {
                        failures.append("step \(index), \(label): neither the denial nor the grant; \(seen)")
                    }
                }
            }
            #expect(failures.isEmpty, "\(failures.count) of \(explored) crash states: \(failures.prefix(6))")
            print(
                "SimulatedCrashEnumerationTests: a flushed denial, then a grant: \(steps.count - 1) durable steps, "
                    + "\(explored) crash states explored")
        }
    }

    /// The gate's flusher folds every intent of the directory into its one write, another process's flushed
    /// take-away included, and then deletes them: no power loss at any step may keep a deletion and lose the state
    /// that took the intent in, since that "no" was on the disk before the flush began.
    @Test func aFlushPassNeverLosesAnotherProcesssFlushedTakeAway() async throws {
        // On a thread of its own: its thousands of starts block on the simulated disk, and would hold a thread of
        // the two-thread cooperative pool that other tests wait on.
        try await onAThreadOfItsOwn {
            let disk = try await Self.prepared(for: .disable)
            let process = disk.process()
            let (privacy, consent) = FileSystem.$current.withValue(process) {
                launchGateAndConsent(on: Self.data, policy: Self.policy)
            }
            _ = await consent.waitForLedgerVerification()
            FileSystem.$current.withValue(process) { privacy.enableFeatures(.push) }
            disk.syncEverything()
            // Another process's disable of push, made durable as an intent (as behind a busy lock), before this one's.
            try FileSystem.$current.withValue(disk.process()) {
                let intent = TakeAwayIntent(stateFile: PrivacyDataDirectory.stateFileName, disable: .push)
                _ = try IntentJournal.record(intent, in: Self.anchor)
            }
            disk.startRecording()
            await Call.blocking { privacy.disableFeatures(.messageCenter) }.make(as: process)
            let synchronized = await FileSystem.$current.withValue(process) { await privacy.synchronize() }
            let steps = disk.stopRecording()
            #expect(synchronized)
            #expect(steps.count > 2, "\(steps.count - 1) durable steps")
            var explored = 0
            var failures: [String] = []
            for (index, state) in steps.enumerated() {
                for (label, crashed) in SimulatedDisk.crashStates(of: state) + [("killed", state)] {
                    explored += 1
                    let seen = await Self.start(on: SimulatedDisk(state: crashed))
                    if seen.push { failures.append("step \(index) of \(steps.count - 1), \(label): push on; \(seen)") }
                    if index == steps.count - 1 && seen.messageCenter {
                        failures.append("after synchronize(), \(label): the disable is lost; \(seen)")
                    }
                }
            }
            #expect(failures.count == 0, "\(failures.count) of \(explored) crash states: \(failures.prefix(4))")
        }
    }
}

/// The removal of a finished revocation's pending record, written with its data flushed and its rename left to the
/// directory's next flush (``AtomicFile/Durability/dataOnly``), crashed after every durable step in every way a power
/// loss could leave the disk, and killed after it returned: every start reads the gate state, finds the revocation
/// still pending or finished, and nothing enabled.
@Suite struct PendingRevocationRemovalCrashTests {
    typealias Enumeration = SimulatedCrashEnumerationTests

    @Test func aRemovalCrashedAnywhereLeavesTheRecordOrItsRemovalAndNothingEnabled() async throws {
        let disk = SimulatedDisk(directories: [Enumeration.anchor])
        let key = FileSystem.$current.withValue(disk.process()) {
            let (privacy, _) = launchGateAndConsent(on: Enumeration.data, policy: Enumeration.policy)
            privacy.enableFeatures(.messageCenter)
            return privacy.beginRevocation(
                PendingRevocation(anonymousIdentifier: nil, isErasureOwed: false), refusing: [.analytics]
            ).pending.requestKey
        }
        disk.syncEverything()
        let process = disk.process()
        let privacy = FileSystem.$current.withValue(process) {
            launchGateAndConsent(on: Enumeration.data, policy: Enumeration.policy).privacy
        }
        disk.startRecording()
        try FileSystem.$current.withValue(process) {
            try privacy.updatePendingRevocation(key: key) { pending in
                pending.areSubsystemsPurged = true
                pending.isIdentifierDeleted = true
            }
        }
        let steps = disk.stopRecording()
        #expect(steps.count > 1 && privacy.pendingRevocation == nil)

        var explored = 0
        var failures: [String] = []
        var outcomes: Set<Bool> = []
        for (index, state) in steps.enumerated() {
            // A power loss: every state the disk could be left in. A kill: the state as processes saw it.
            let crashes = SimulatedDisk.crashStates(of: state) + [("killed", state)]
            for (label, crashed) in crashes {
                explored += 1
                let restarted = SimulatedDisk(state: crashed)
                restarted.waitsForLocks = true
                let diagnostics = Collector<PrivacyManagerDiagnostic>()
                let start = FileSystem.$current.withValue(restarted.process()) {
                    PrivacyManager(
                        configuration: PrivacyConfiguration(enabledFeatures: []),
                        store: FileFeatureStore(url: Enumeration.data.stateFile), consentPolicy: Enumeration.policy,
                        diagnosticHandler: { diagnostics.append($0) })
                }
                let pending = start.pendingRevocation
                outcomes.insert(pending == nil)
                var found: [String] = []
                if start.isAnyEnabled() { found.append("a feature on") }
                if !diagnostics.all.isEmpty { found.append("diagnostics \(diagnostics.all)") }
                if let pending, pending.requestKey != key { found.append("another pending revocation") }
                if label == "killed" && index == steps.count - 1 && pending != nil {
                    found.append("the removal was lost to a kill after it returned")
                }
                failures += found.map { "step \(index) of \(steps.count - 1), \(label): \($0)" }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(explored) crash states: \(failures.prefix(8))")
        // Both outcomes occur: the enumeration reaches states before and after the rename.
        #expect(outcomes == [true, false], "\(outcomes)")
        print("PendingRevocationRemovalCrashTests: \(steps.count - 1) durable steps, \(explored) crash states explored")
    }
}

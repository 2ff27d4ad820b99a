import FeatureGate
import Foundation
import NoopRuntime
import Testing

/// The five scenarios of issue 11, each reproduced on the code before its fix: revocation landing at the worst
/// moment must still be final.
@Suite struct RevocationScenarioTests {
    /// Scenario 1: a flush fails once; during the backoff wait the gate closes, the buffer is purged, and consent
    /// is granted again. The retry must not deliver the batch captured before the revocation.
    @Test func aRetryAfterPurgeAndRegrantDuringBackoffDeliversNothing() async throws {
        let privacy = gate(.analytics)
        let backend = ScriptedBackend("upload", failures: 1)
        let sleeper = PausingSleeper()
        let buffer = GatedEventBuffer(
            features: .analytics, capacity: 10, privacy: privacy, backends: [backend],
            retryPolicy: RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(10), maxDelay: .seconds(1)),
            counter: IOCounter(), sleep: sleeper.sleep)
        try buffer.track(1)
        try buffer.track(2)
        let flush = Task { await buffer.flush() }
        await sleeper.pause.arrived.wait()

        privacy.disableFeatures(.analytics)
        _ = buffer.purge()
        privacy.enableFeatures(.analytics)
        sleeper.pause.released.open()
        let report = await flush.value

        #expect(backend.delivered.isEmpty, "delivered after revocation: \(backend.delivered)")
        #expect(report.backends.first?.result == .abandonedGateClosed)
        #expect(report.purgedEvents == 2)
        #expect(buffer.backlogs == ["upload": 0])
    }

    /// Scenario 1, without a purge in between: the gate closes and opens again during the backoff, before the
    /// runtime got round to purging. The disable alone revokes the batch.
    @Test func aRetryAfterTheGateClosedAndReopenedDuringBackoffDeliversNothing() async throws {
        let privacy = gate(.analytics)
        let backend = ScriptedBackend("upload", failures: 1)
        let sleeper = PausingSleeper()
        let buffer = GatedEventBuffer(
            features: .analytics, capacity: 10, privacy: privacy, backends: [backend],
            retryPolicy: RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(10), maxDelay: .seconds(1)),
            counter: IOCounter(), sleep: sleeper.sleep)
        try buffer.track(1)
        let flush = Task { await buffer.flush() }
        await sleeper.pause.arrived.wait()

        privacy.disableFeatures(.analytics)
        privacy.enableFeatures(.analytics)
        sleeper.pause.released.open()
        let report = await flush.value

        #expect(backend.delivered.isEmpty, "delivered after revocation: \(backend.delivered)")
        #expect(report.purgedEvents == 1)
    }

    /// Scenario 2: a write admitted just before the disable finishes after the runtime stopped and purged the
    /// subsystem. When `settle()` returns the storage must be empty, whatever the write did meanwhile.
    @Test func aWriteInFlightDuringTheDisableDoesNotSurviveThePurge() async throws {
        let privacy = gate(.analytics)
        let ledger = IOCounter()
        let inner = PausingStorage()
        let storage = GatedStorage(inner, features: .analytics, privacy: privacy, counter: ledger)
        let subsystem = StorageSubsystem("analytics", storage: storage)
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(subsystem)
        runtime.start()
        await runtime.settle()

        inner.pauseWrites.store(true, ordering: .releasing)
        let written = Latch()
        let writer = Thread {
            _ = try? storage.write(Data("captured before the revocation".utf8), to: "queue/events.jsonl")
            written.open()
        }
        writer.start()
        await inner.writePause.arrived.wait()

        privacy.disableFeatures(.analytics)
        let releaser = Task.detached {
            // Let the write land only once the purge has begun (counted as it starts).
            while ledger.counts(for: .analytics).purges == 0 { await Task.yield() }
            for _ in 0..<20 { await Task.yield() }
            inner.writePause.release()
        }
        await runtime.settle()
        let leftWhenSettled = inner.names
        await releaser.value
        await written.wait()
        #expect(leftWhenSettled.isEmpty, "left when settle() returned: \(leftWhenSettled)")
        #expect(inner.names.isEmpty, "left after the purge: \(inner.names)")

        // And revoke-all's extra purge must not skip it as clean while a write was in flight.
        #expect(runtime.phase(of: subsystem) == .stopped)
    }

    /// Scenario 3 (the runtime's half): a subsystem registered while the gate is still delivering changes made
    /// before it registered gets no stop, opt-out or purge for those changes.
    @Test func aSubsystemRegisteredDuringDeliveryGetsNoEdgeFromBeforeItStarted() async throws {
        let privacy = gate(.analytics)
        let runtime = SubsystemRuntime(privacy: privacy)
        // Registered before the runtime, so the delivering thread blocks here before the runtime sees the change.
        let blocker = DeliveryBlocker(privacy, armed: true)
        defer { blocker.cancel() }
        runtime.start()
        await runtime.settle()

        let disabler = Thread { privacy.disableFeatures(.analytics) }
        disabler.start()
        await blocker.arrived.wait()
        // The disable is being delivered (blocked in the first observer); this enable is queued behind it.
        privacy.enableFeatures(.analytics)

        let log = Collector<String>()
        let transport = RecordingTransport()
        let late = StorageSubsystem(
            "late",
            storage: GatedStorage(MemoryStorage(), features: .analytics, privacy: privacy, counter: IOCounter()),
            log: log,
            optOut: GatedTransport(transport, features: .analytics, privacy: privacy, counter: IOCounter()))
        runtime.register(late)
        await runtime.settle()
        #expect(log.all == ["late.start"])

        blocker.release()
        while privacy.enabledFeatures != .analytics { await Task.yield() }
        // Let the delivering thread hand both old changes to the runtime, then let the runtime act on them.
        for _ in 0..<100 {
            await runtime.settle()
            await Task.yield()
        }
        #expect(log.all == ["late.start"], "the late subsystem went through edges from before it started")
        #expect(transport.requests.count == 0)
        #expect(runtime.phase(of: late) == .running)
    }

    /// Scenario 3, for a subsystem the runtime restarts (disabled and enabled again before a pass): after the
    /// restart it takes edges from the restarting pass's observer only, so a disable made before that pass and
    /// delivered late gives it no second stop and opt-out. Before, the stop step dropped the new observer and the
    /// subsystem went back to the runtime's first one, which still had that old disable to deliver.
    @Test func aSubsystemRestartedByAPassGetsNoEdgeFromBeforeTheRestart() async throws {
        let privacy = gate(.analytics)
        // Registered before the runtime, so a change it blocks reaches none of the runtime's observers yet.
        let blocker = DeliveryBlocker(privacy, armed: false)
        defer { blocker.cancel() }
        let log = Collector<String>()
        let transport = RecordingTransport()
        let optOut = GatedTransport(transport, features: .analytics, privacy: privacy, counter: IOCounter())
        let slowStarted = Latch()
        let slowMayFinish = Latch()
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(RecordingSubsystem("analytics", needs: .analytics, log: log, optOutTransport: optOut))
        runtime.register(
            RecordingSubsystem("slow", needs: .contacts, log: log) {
                slowStarted.open()
                await slowMayFinish.wait()
            })
        runtime.start()
        await runtime.settle()
        privacy.enableFeatures(.contacts)
        await slowStarted.wait()  // the runtime's worker is held in slow.start

        privacy.disableFeatures(.analytics)  // noted: the next pass restarts analytics
        privacy.enableFeatures(.analytics)
        blocker.arm()
        let delivered = Latch()
        let disabler = Thread {
            privacy.disableFeatures(.analytics)  // returns once it delivered the enable queued behind it too
            delivered.open()
        }
        disabler.start()
        await blocker.arrived.wait()
        privacy.enableFeatures(.analytics)  // queued behind the blocked disable

        slowMayFinish.open()
        await runtime.settle()  // the pass that restarts analytics, reading the gate after both changes
        #expect(log.all == ["analytics.start", "slow.start", "analytics.stop", "analytics.purge", "analytics.start"])

        blocker.release()
        await delivered.wait()
        for _ in 0..<100 {
            await runtime.settle()
            await Task.yield()
        }
        #expect(log.all == ["analytics.start", "slow.start", "analytics.stop", "analytics.purge", "analytics.start"])
        #expect(transport.paths() == ["/opt-out/analytics"])
    }

    /// Scenario 4: revoke-all before `runtime.start()` purges registered subsystems that never ran (their files
    /// come from an earlier run) and reports what it could not purge.
    @Test func revokeAllBeforeStartPurgesSubsystemsThatNeverRan() async throws {
        let privacy = gate()
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        let runtime = SubsystemRuntime(privacy: privacy)
        let inner = MemoryStorage()
        try inner.write(Data("from an earlier run".utf8), to: "queue/events.jsonl")
        let subsystem = StorageSubsystem(
            "analytics", storage: GatedStorage(inner, features: .analytics, privacy: privacy, counter: IOCounter()))
        runtime.register(subsystem)
        let failing = FailingPurgeSubsystem()
        runtime.register(failing)
        let revocation = ConsentRevocation(
            consent: consent, runtime: runtime, identifier: AnonymousIdentifier(privacy: privacy, url: nil),
            deadline: unhurriedDeadline)

        let report = await revocation.revokeAll()

        #expect(inner.names.isEmpty, "left behind: \(inner.names)")
        #expect(report.purges.map(\.subsystem) == ["failing", "analytics"])
        #expect(report.totalPurged.removedFiles == ["queue/events.jsonl"])
        #expect(report.totalPurged.failures == ["disk on fire"])
        #expect(!report.isComplete)
    }

    /// Scenario 5 (the buffer's half of the demo's bug): a flush whose task is cancelled, as a stopping subsystem
    /// cancels its in-flight flush, returns without waiting for a hanging backend, and its batch is delivered to
    /// no backend afterwards, not even a later one.
    @Test func aCancelledFlushReturnsAtOnceAndHandsNothingMoreToAnyBackend() async throws {
        let privacy = gate(.analytics)
        let hanging = HangingBackend()
        let backend = ScriptedBackend("upload", failures: 1)
        let buffer = GatedEventBuffer(
            features: .analytics, capacity: 10, privacy: privacy, backends: [hanging, backend],
            retryPolicy: RetryPolicy(maxAttempts: 3, initialDelay: .seconds(3_600), maxDelay: .seconds(3_600)),
            counter: IOCounter())
        try buffer.track(1)
        let flush = Task { await buffer.flush() }
        await hanging.started.wait()
        while backend.attemptCount == 0 { await Task.yield() }
        flush.cancel()
        let report = await flush.value
        #expect(report.backends.map(\.result) == [.cancelled, .cancelled])
        hanging.release.open()
        #expect(backend.delivered.isEmpty)
        privacy.disableFeatures(.analytics)
        #expect(buffer.bufferedCount == 0 && buffer.backlogs.values.allSatisfy { $0 == 0 })
    }
}

extension RevocationScenarioTests {
    /// Found by schedule exploration: revoke-all denied the categories in name order, and applying the denial of
    /// `advertising` re-applied the still-granted `analytics`, switching analytics back on mid-revocation after the
    /// app had disabled it: the runtime started the subsystem, then stopped it with a second opt-out.
    @Test func revokeAllNeverSwitchesBackOnWhatTheAppDisabled() async throws {
        let privacy = gate(.analytics)
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        let runtime = SubsystemRuntime(privacy: privacy)
        let log = Collector<String>()
        let transport = RecordingTransport()
        runtime.register(
            RecordingSubsystem(
                "analytics", needs: .analytics, log: log,
                optOutTransport: GatedTransport(transport, features: .analytics, privacy: privacy, counter: IOCounter())
            ))
        runtime.start()
        await runtime.settle()
        privacy.disableFeatures(.analytics)
        await runtime.settle()
        #expect(log.all == ["analytics.start", "analytics.stop", "analytics.purge"])

        let report = await ConsentRevocation(
            consent: consent, runtime: runtime, identifier: AnonymousIdentifier(privacy: privacy, url: nil),
            deadline: unhurriedDeadline
        ).revokeAll()
        #expect(log.all == ["analytics.start", "analytics.stop", "analytics.purge"], "revoke-all restarted it")
        #expect(transport.paths() == ["/opt-out/analytics"])
        #expect(report.consentRecords.map(\.category) == [.analytics, .advertising, .thirdPartySharing])
    }
}

/// A subsystem whose purge always fails.
final class FailingPurgeSubsystem: Subsystem {
    let name = "failing"
    let requiredFeatures: Feature = .push
    func start() async throws {}
    func stop(reason: StopReason) async {}
    func purge() async -> PurgeReport { PurgeReport(failures: ["disk on fire"]) }
}

import FeatureGate
import NoopRuntime
import Testing

@Suite struct GatedEventBufferTests {
    private func buffer(
        _ privacy: PrivacyManager,
        capacity: Int = 100,
        backends: [any EventBackend<Int>],
        policy: RetryPolicy = RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(100), maxDelay: .seconds(10)),
        ledger: IOCounter = IOCounter(),
        sleeper: RecordingSleeper = RecordingSleeper()
    ) -> GatedEventBuffer<Int> {
        GatedEventBuffer(
            features: .analytics,
            capacity: capacity,
            privacy: privacy,
            backends: backends,
            retryPolicy: policy,
            counter: ledger,
            sleep: sleeper.sleep,
            // Not what these tests are about: a real-time deadline would cancel flushes while other tests hold the
            // cooperative threads (EventDeliveryFaultTests test the deadline on an injected clock).
            flushDeadline: .seconds(3_600)
        )
    }

    @Test func aClosedBufferRefusesEveryEventAndTouchesNoBackend() async {
        let ledger = IOCounter()
        let events = buffer(gate(), backends: [ExplodingBackend()], ledger: ledger)
        for event in 0..<100 {
            #expect(throws: GatedIOError.self) { try events.track(event) }
        }
        #expect(events.bufferedCount == 0)
        let report = await events.flush()
        #expect(report.outcome == .purged)
        #expect(report.purgedEvents == 0)
        #expect(ledger.counts(for: .analytics).eventsRefused == 100)
        #expect(ledger.totals.isSilent)
    }

    /// The window the buffer's observer cannot close: the gate closes and reopens while an earlier observer is still
    /// being told of the close, so the buffer's own observer has heard nothing yet. Every path that keeps or hands
    /// out events catches up with the gate's revocation counter itself, so the events captured before the close
    /// are gone before the buffer is told, and an event tracked in the window is kept once, not revoked late.
    @Test func eventsCapturedBeforeARevocationAreGoneBeforeTheBuffersObserverIsTold() async throws {
        let privacy = gate(.analytics)
        let inWindow = Collector<Int>()
        let backend = ScriptedBackend("upload")
        let holder = LockedValue<GatedEventBuffer<Int>?>(nil)
        // Registered before the buffer exists, so it is told first.
        let earlier = privacy.observe { change in
            guard change.disabled.contains(.analytics), let events = holder.withLock({ $0 }) else { return }
            privacy.enableFeatures(.analytics)  // queued behind this delivery: the buffer hears of neither yet
            try? events.track(99)
            inWindow.append(events.bufferedCount)
        }
        let events = buffer(privacy, backends: [backend])
        holder.withLock { $0 = events }
        for event in 0..<5 { try events.track(event) }
        privacy.disableFeatures(.analytics)
        #expect(inWindow.all == [1], "the five old events outlived the revocation inside the window")
        _ = await events.flush()
        #expect(backend.batches.all == [[99]])
        withExtendedLifetime(earlier) {}
    }

    @Test func aFullBufferDropsTheOldestAndCountsTheDrops() async throws {
        let backend = ScriptedBackend("upload")
        let events = buffer(gate(.analytics), capacity: 3, backends: [backend])
        for event in 1...5 { try events.track(event) }
        #expect(events.bufferedCount == 3)
        #expect(events.droppedCount == 2)

        let report = await events.flush()
        #expect(report.outcome == .flushed)
        #expect(backend.batches.all == [[3, 4, 5]])
        #expect(events.bufferedCount == 0)

        for event in 6...7 { try events.track(event) }
        _ = await events.flush()
        #expect(backend.batches.all == [[3, 4, 5], [6, 7]])
        #expect(events.droppedCount == 2)
    }

    @Test func aFailingBackendIsRetriedWithExponentialBackoffUpToTheLimit() async throws {
        let sleeper = RecordingSleeper()
        let backend = ScriptedBackend("upload", alwaysFail: true)
        let policy = RetryPolicy(maxAttempts: 5, initialDelay: .milliseconds(100), maxDelay: .milliseconds(500))
        let events = buffer(gate(.analytics), backends: [backend], policy: policy, sleeper: sleeper)
        try events.track(1)

        let report = await events.flush()
        let expected: [Duration] = [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(500)]
        #expect(sleeper.delays.all == expected)
        #expect(backend.attemptCount == 5)
        #expect(report.backends.first?.attempts == 5)
        #expect(report.backends.first?.delays == expected)
        #expect(report.backends.first?.result == .failed("attempt 5 failed"))
        #expect(events.backlogs == ["upload": 1])
    }

    @Test func aBackendThatRecoversWithinTheRetriesGetsTheBatchOnce() async throws {
        let sleeper = RecordingSleeper()
        let backend = ScriptedBackend("upload", failures: 2)
        let events = buffer(gate(.analytics), backends: [backend], sleeper: sleeper)
        try events.track(1)
        try events.track(2)
        let report = await events.flush()
        #expect(report.backends.first?.result == .delivered)
        #expect(report.backends.first?.attempts == 3)
        #expect(sleeper.delays.all == [.milliseconds(100), .milliseconds(200)])
        #expect(backend.batches.all == [[1, 2]])
        #expect(events.backlogs == ["upload": 0])
    }

    @Test func retryPolicyDelaysGrowByTheMultiplierAndStopAtTheCap() {
        let policy = RetryPolicy(maxAttempts: 10, initialDelay: .seconds(1), multiplier: 3, maxDelay: .seconds(20))
        #expect((1...5).map(policy.delay(afterFailedAttempt:)) == [1, 3, 9, 20, 20].map { Duration.seconds($0) })
    }

    @Test func oneFailingBackendDoesNotHoldBackTheOthers() async throws {
        let down = ScriptedBackend("down", alwaysFail: true)
        let upload = ScriptedBackend("upload")
        let queue = ScriptedBackend("queue")
        let events = buffer(gate(.analytics), backends: [down, upload, queue])
        for event in 1...3 { try events.track(event) }

        let first = await events.flush()
        #expect(first.backends.map(\.result) == [.failed("attempt 3 failed"), .delivered, .delivered])
        #expect(upload.batches.all == [[1, 2, 3]])
        #expect(queue.batches.all == [[1, 2, 3]])
        #expect(events.backlogs == ["down": 3, "upload": 0, "queue": 0])

        down.recover()
        try events.track(4)
        _ = await events.flush()
        // The failed batch is retried unchanged (its idempotency key too), then the newer event in a batch of its own.
        #expect(down.batches.all == [[1, 2, 3], [4]])
        #expect(upload.batches.all == [[1, 2, 3], [4]])
        #expect(events.backlogs == ["down": 0, "upload": 0, "queue": 0])
    }

    @Test func aBackendBacklogIsBoundedAndItsOverflowCountsAsDrops() async throws {
        let down = ScriptedBackend("down", alwaysFail: true)
        let policy = RetryPolicy(maxAttempts: 1, initialDelay: .zero, maxDelay: .zero)
        let events = buffer(gate(.analytics), capacity: 4, backends: [down], policy: policy)
        for event in 1...3 { try events.track(event) }
        _ = await events.flush()
        for event in 4...6 { try events.track(event) }
        _ = await events.flush()
        #expect(events.backlogs == ["down": 4])
        #expect(events.droppedCount == 2)
        down.recover()
        _ = await events.flush()
        // The failed batch lost its oldest events to the bound: what is left of it goes first, under a new key.
        #expect(down.batches.all == [[3], [4, 5, 6]])
    }

    @Test func closingTheGatePurgesInsteadOfFlushing() async throws {
        let privacy = gate(.analytics)
        let events = buffer(privacy, backends: [ExplodingBackend()])
        for event in 1...7 { try events.track(event) }
        privacy.disableFeatures(.analytics)

        let report = await events.flush()
        #expect(report.outcome == .purged)
        #expect(report.purgedEvents == 7)
        #expect(events.bufferedCount == 0)
        #expect(events.purgedCount == 7)
        #expect(throws: GatedIOError.self) { try events.track(8) }
    }

    @Test func theGateClosingBetweenRetriesAbandonsThemAndPurges() async throws {
        let privacy = gate(.analytics)
        let backend = ScriptedBackend("upload", alwaysFail: true) { privacy.disableFeatures(.analytics) }
        let events = buffer(privacy, backends: [backend])
        try events.track(1)
        try events.track(2)

        let report = await events.flush()
        #expect(backend.attemptCount == 1)
        #expect(report.backends.first?.result == .abandonedGateClosed)
        #expect(report.purgedEvents == 2)
        #expect(events.backlogs == ["upload": 0])
    }

    @Test func purgeDropsTheBufferAndTheBacklogs() async throws {
        let down = ScriptedBackend("down", alwaysFail: true)
        let events = buffer(gate(.analytics), backends: [down, ScriptedBackend("up")])
        for event in 1...3 { try events.track(event) }
        _ = await events.flush()
        try events.track(4)
        #expect(events.purge() == 4)  // 3 waiting for "down", 1 in memory
        #expect(events.purge() == 0)
        #expect(events.backlogs == ["down": 0, "up": 0])
    }
}

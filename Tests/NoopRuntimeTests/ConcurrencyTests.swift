import FeatureGate
import NoopRuntime
import Testing

@Suite struct ConcurrencyTests {
    /// Eight tasks toggle features thousands of times while the runtime follows; calls never overlap, every
    /// subsystem's history is a valid lifecycle, one opt-out per stop, and the end state matches the gate.
    @Test func thousandsOfTogglesKeepTransitionsSerialAndConsistent() async {
        let privacy = gate()
        let ledger = IOCounter()
        let transport = RecordingTransport()
        let overlap = OverlapDetector()
        let runtime = SubsystemRuntime(privacy: privacy)
        let flags: [Feature] = [.push, .analytics, .contacts, .messageCenter]
        var logs: [String: Collector<String>] = [:]
        for flag in flags {
            let name = FeatureCatalog.builtIn.name(of: flag)!
            let log = Collector<String>()
            logs[name] = log
            let optOut = GatedTransport(transport, features: flag, privacy: privacy, counter: ledger)
            runtime.register(
                RecordingSubsystem(name, needs: flag, log: log, inFlight: overlap, optOutTransport: optOut)
            )
        }
        runtime.register(RecordingSubsystem("both", needs: [.push, .analytics], log: Collector(), inFlight: overlap))
        runtime.start()

        let rounds = 1_500
        await withTaskGroup(of: Void.self) { group in
            for (index, flag) in flags.enumerated() {
                group.addTask {
                    for round in 0..<rounds {
                        privacy.enableFeatures(flag)
                        if round.isMultiple(of: 100) { await runtime.settle() }
                        privacy.disableFeatures(flag)
                    }
                    if index.isMultiple(of: 2) { privacy.enableFeatures(flag) }
                }
                group.addTask {
                    for _ in 0..<50 { await runtime.settle() }
                }
            }
        }
        await runtime.settle()

        #expect(privacy.enabledFeatures == [.push, .contacts])
        var stops = 0
        for (name, log) in logs {
            // A valid history: start, then stop and purge, any number of times; purges alone are allowed.
            var running = false
            var previous = ""
            for call in log.all {
                switch call {
                case "\(name).start":
                    #expect(!running, "\(name) started twice")
                    running = true
                case "\(name).stop":
                    #expect(running, "\(name) stopped while not running")
                    running = false
                    stops += 1
                case "\(name).purge":
                    #expect(!running, "\(name) purged while running")
                default:
                    Issue.record("unexpected call \(call)")
                }
                if call == "\(name).purge" && previous == "\(name).start" { Issue.record("purge right after start") }
                previous = call
            }
            let shouldRun = name == "push" || name == "contacts"
            #expect(running == shouldRun, "\(name) ended \(running ? "running" : "stopped")")
        }
        #expect(transport.requests.count == stops)
        #expect(ledger.totals.exitRequestsSent == stops)
        #expect(ledger.totals.exitRequestsRefused == stops)
        #expect(overlap.calls.load(ordering: .relaxed) == 0)
    }

    /// Trackers, flushers and a toggler race on one buffer; every accepted event is delivered, dropped, purged or
    /// still waiting, exactly once.
    @Test func concurrentTrackingFlushingAndTogglingAccountsForEveryEvent() async {
        let privacy = gate(.analytics)
        let ledger = IOCounter()
        let backend = ScriptedBackend("upload")
        let events = GatedEventBuffer<Int>(
            features: .analytics,
            capacity: 64,
            privacy: privacy,
            backends: [backend],
            retryPolicy: RetryPolicy(maxAttempts: 2, initialDelay: .zero, maxDelay: .zero),
            counter: ledger,
            sleep: { _ in }
        )
        let refused = OverlapDetector()
        await withTaskGroup(of: Void.self) { group in
            for tracker in 0..<4 {
                group.addTask {
                    for event in 0..<5_000 {
                        do { try events.track(tracker * 10_000 + event) } catch {
                            refused.calls.add(1, ordering: .relaxed)
                        }
                        if event.isMultiple(of: 32) { await Task.yield() }
                    }
                }
            }
            group.addTask {
                for _ in 0..<1_000 {
                    _ = await events.flush()
                    await Task.yield()
                }
            }
            group.addTask {
                for round in 0..<2_000 {
                    if round.isMultiple(of: 2) {
                        privacy.disableFeatures(.analytics)
                    } else {
                        privacy.enableFeatures(.analytics)
                    }
                    if round.isMultiple(of: 7) { events.purge() }
                    await Task.yield()
                }
            }
        }
        let accepted = ledger.counts(for: .analytics).eventsAccepted
        #expect(accepted + refused.calls.load(ordering: .relaxed) == 20_000)
        #expect(ledger.counts(for: .analytics).eventsRefused == refused.calls.load(ordering: .relaxed))
        let waiting = events.bufferedCount + (events.backlogs["upload"] ?? 0)
        #expect(backend.delivered.count + events.droppedCount + events.purgedCount + waiting == accepted)
        #expect(Set(backend.delivered).count == backend.delivered.count)
    }
}

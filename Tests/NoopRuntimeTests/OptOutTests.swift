import FeatureGate
import NoopRuntime
import Testing

@Suite struct OptOutTests {
    private struct Setup {
        let privacy: PrivacyManager
        let runtime: SubsystemRuntime
        let transport = RecordingTransport()
        let ledger = IOCounter()

        init(_ features: Feature = []) {
            privacy = gate(features)
            runtime = SubsystemRuntime(privacy: privacy)
            let gated = GatedTransport(transport, features: .push, privacy: privacy, counter: ledger)
            runtime.register(RecordingSubsystem("push", needs: .push, log: Collector(), optOutTransport: gated))
            runtime.start()
        }
    }

    @Test func anEnabledToDisabledEdgeSendsExactlyOneOptOutRequest() async {
        let setup = Setup()
        setup.privacy.enableFeatures(.push)
        await setup.runtime.settle()
        #expect(setup.transport.requests.count == 0)

        setup.privacy.disableFeatures(.push)
        await setup.runtime.settle()
        setup.privacy.disableFeatures(.push)  // disabling again: no edge
        setup.privacy.disableFeatures(.all)
        await setup.runtime.settle()

        #expect(setup.transport.paths() == ["/opt-out/push"])
        // The subsystem tried twice in its stop; the permit let one through.
        #expect(setup.ledger.counts(for: .push).exitRequestsSent == 1)
        #expect(setup.ledger.counts(for: .push).exitRequestsRefused == 1)
    }

    @Test func startingDisabledSendsNoOptOutRequest() async {
        let setup = Setup()
        await setup.runtime.settle()
        setup.privacy.disableFeatures(.all)
        await setup.runtime.settle()
        #expect(setup.transport.requests.count == 0)
        #expect(setup.ledger.totals.isZero)
    }

    @Test func eachNewEnabledPeriodAllowsOneMoreOptOut() async {
        let setup = Setup(.push)
        for _ in 0..<3 {
            await setup.runtime.settle()
            setup.privacy.disableFeatures(.push)
            await setup.runtime.settle()
            setup.privacy.disableFeatures(.push)
            await setup.runtime.settle()
            setup.privacy.enableFeatures(.push)
        }
        await setup.runtime.settle()
        #expect(setup.transport.paths() == Array(repeating: "/opt-out/push", count: 3))
    }

    @Test func anExitRequestGoesPastAClosedGateOnlyWithAnArmedPermit() async throws {
        let privacy = gate()
        let ledger = IOCounter()
        let transport = RecordingTransport()
        let gated = GatedTransport(transport, features: .push, privacy: privacy, counter: ledger)
        let permit = OneShotPermit()

        await #expect(throws: GatedIOError.self) {
            try await gated.sendExitRequest(TransportRequest(method: "POST", path: "/x"), permit: permit)
        }
        permit.arm()
        let response = try await gated.sendExitRequest(TransportRequest(method: "POST", path: "/x"), permit: permit)
        #expect(response.statusCode == 200)
        #expect(transport.requests.count == 1)
        #expect(!permit.isArmed)
        #expect(permit.spendCount == 1)
    }

    @Test func aDisarmedPermitCannotBeSpent() {
        let permit = OneShotPermit(armed: true)
        permit.disarm()
        #expect(!permit.spend())
        permit.arm()
        permit.arm()
        #expect(permit.spend())
        permit.disarm()  // a spent permit stays spent
        #expect(!permit.spend())
        #expect(permit.spendCount == 1)
    }

    @Test func concurrentSpendersWinExactlyOncePerArming() async {
        let permit = OneShotPermit()
        let rounds = 200
        let spenders = 16
        for _ in 0..<rounds {
            permit.arm()
            let wins = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<spenders { group.addTask { permit.spend() ? 1 : 0 } }
                return await group.reduce(0, +)
            }
            #expect(wins == 1)
        }
        #expect(permit.spendCount == rounds)
    }

    @Test func withPermitRunsTheBodyOnce() async {
        let permit = OneShotPermit(armed: true)
        let runs = AtomicWord<Int>(0)
        for _ in 0..<5 { _ = await permit.withPermit { runs.add(1, ordering: .relaxed) } }
        #expect(runs.load(ordering: .relaxed) == 1)
    }
}

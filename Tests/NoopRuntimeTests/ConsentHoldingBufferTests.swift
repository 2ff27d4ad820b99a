import FeatureGate
import Foundation
import NoopRuntime
import Testing

/// "Undecided is not denied": events tracked before the consent banner is answered wait in memory.
@Suite struct ConsentHoldingBufferTests {
    private struct Setup {
        let privacy: PrivacyManager
        let consent: ConsentManager
        let backend: ScriptedBackend
        let buffer: GatedEventBuffer<Int>
        let hold: ConsentHoldingBuffer<Int>
        let ledger: IOCounter
    }

    private func setUp(capacity: Int = 100) async -> Setup {
        let privacy = gate(.analytics)
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        let backend = ScriptedBackend("upload")
        let ledger = IOCounter()
        let buffer = GatedEventBuffer(
            features: .analytics, capacity: 1_000, privacy: privacy, backends: [backend], counter: ledger)
        let hold = await ConsentHoldingBuffer(
            buffer: buffer, consent: consent, category: .analytics, capacity: capacity)
        return Setup(privacy: privacy, consent: consent, backend: backend, buffer: buffer, hold: hold, ledger: ledger)
    }

    @Test func eventsTrackedWhileUndecidedAreHeldInMemoryAndReachNothing() async {
        let setup = await setUp()
        #expect(!setup.buffer.isOpen)
        for event in 1...5 { #expect(setup.hold.track(event) == .heldUntilConsent) }
        #expect(setup.hold.heldCount == 5)
        let report = await setup.buffer.flush()
        #expect(report.outcome == .purged && report.purgedEvents == 0)
        #expect(setup.backend.attemptCount == 0)
        #expect(setup.ledger.totals.isZero, "held events are neither stored, sent nor queued: \(setup.ledger.totals)")
    }

    @Test func aGrantReleasesTheHeldEventsOldestFirstKeepingThemAsTracked() async throws {
        let setup = await setUp()
        // Each event is its own capture time; the hold must hand over exactly what was tracked, in order.
        let captured = [1_000, 1_001, 1_002]
        for event in captured { setup.hold.track(event) }
        try await setup.consent.setStatus(.granted, for: .analytics, source: .user)
        #expect(setup.hold.heldCount == 0)
        #expect(setup.hold.releasedCount == 3)
        setup.hold.track(1_003)
        _ = await setup.buffer.flush()
        #expect(setup.backend.delivered == captured + [1_003])
    }

    @Test(arguments: [ConsentStatus.denied, .restricted])
    func aDenialOrRestrictionPurgesTheHeldEventsAndCountsThem(status: ConsentStatus) async throws {
        let setup = await setUp()
        for event in 1...4 { setup.hold.track(event) }
        try await setup.consent.setStatus(status, for: .analytics, source: .user)
        #expect(setup.hold.heldCount == 0)
        #expect(setup.hold.purgedCount == 4)
        #expect(setup.hold.track(5) == .refused(.consent(.analytics, status)), "decided and closed: refused")
        try await setup.consent.setStatus(.granted, for: .analytics, source: .user)
        _ = await setup.buffer.flush()
        #expect(setup.backend.delivered.isEmpty, "nothing held before the denial comes back")
    }

    /// `track` tells held from accepted from refused, and says why a refusal happened.
    @Test func trackSaysWhetherTheEventWasAcceptedHeldOrRefusedAndWhy() async throws {
        let setup = await setUp()
        #expect(setup.hold.track(1) == .heldUntilConsent)
        #expect(setup.hold.track(1).isKept)
        try await setup.consent.setStatus(.granted, for: .analytics, source: .user)
        #expect(setup.hold.track(2) == .accepted)
        // Off for another reason than the category's answer: the app switched analytics off.
        setup.privacy.disableFeatures(.analytics)
        #expect(setup.hold.track(3) == .refused(.gateClosed(.analytics)))
        #expect(!setup.hold.track(3).isKept)
        #expect(String(describing: setup.hold.track(3)) == "refused: the gate is closed for [analytics]")
        try await setup.consent.setStatus(.denied, for: .analytics, source: .user)
        #expect(String(describing: setup.hold.track(4)) == "refused: analytics denied")
    }

    @Test func theHoldIsBoundedAndDropsTheOldest() async throws {
        let setup = await setUp(capacity: 3)
        for event in 1...10 { setup.hold.track(event) }
        #expect(setup.hold.heldCount == 3)
        #expect(setup.hold.droppedCount == 7)
        try await setup.consent.setStatus(.granted, for: .analytics, source: .user)
        _ = await setup.buffer.flush()
        #expect(setup.backend.delivered == [8, 9, 10])
    }

    @Test func anOtherCategoryChangesNothing() async throws {
        let setup = await setUp()
        setup.hold.track(1)
        try await setup.consent.setStatus(.denied, for: .advertising, source: .user)
        #expect(setup.hold.heldCount == 1)
    }

    /// Thousands of events tracked from many tasks while the grant lands: each is delivered exactly once or
    /// counted as dropped, never lost, never duplicated.
    @Test func eventsTrackedConcurrentlyWithTheGrantAreDeliveredOnceOrCountedAsDropped() async throws {
        let setup = await setUp(capacity: 500)
        let tasks = 8
        let perTask = 500
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for index in 0..<perTask { setup.hold.track(task * perTask + index) }
                }
            }
            group.addTask { _ = try? await setup.consent.setStatus(.granted, for: .analytics, source: .user) }
        }
        _ = await setup.buffer.flush()
        let delivered = setup.backend.delivered
        #expect(Set(delivered).count == delivered.count, "an event was delivered twice")
        let bufferDrops = setup.buffer.droppedCount
        #expect(delivered.count + setup.hold.droppedCount + bufferDrops == tasks * perTask)
        #expect(setup.hold.heldCount == 0)
    }
}

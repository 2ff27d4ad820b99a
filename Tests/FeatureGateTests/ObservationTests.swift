import FeatureGate
import Foundation
import Testing

@Suite struct ObservationTests {
    @Test func callbacksFireOncePerRealChangeInOrder() {
        let gate = manager([])
        let changes = Collector<FeatureChange>()
        let token = gate.observe { changes.append($0) }
        gate.enableFeatures(.push)
        gate.enableFeatures(.push)  // no-op
        gate.enabledFeatures = .push  // no-op
        gate.disableFeatures([])  // no-op
        gate.enableFeatures([.analytics, .contacts])
        gate.remoteDisabledFeatures = .messageCenter  // effective set unchanged
        gate.remoteDisabledFeatures = .analytics
        gate.remoteDisabledFeatures = []
        gate.enabledFeatures = []
        withExtendedLifetime(token) {}
        #expect(
            changes.all == [
                FeatureChange(previous: [], current: .push),
                FeatureChange(previous: .push, current: [.push, .analytics, .contacts]),
                FeatureChange(previous: [.push, .analytics, .contacts], current: [.push, .contacts]),
                FeatureChange(previous: [.push, .contacts], current: [.push, .analytics, .contacts]),
                FeatureChange(previous: [.push, .analytics, .contacts], current: []),
            ])
        #expect(changes.all[4].disabled == [.push, .analytics, .contacts])
        #expect(changes.all[1].enabled == [.analytics, .contacts])
    }

    @Test func settingAllWhenEverythingIsOnNotifiesNothing() {
        let gate = manager(.all)
        let count = LockedValue(0)
        let token = gate.observe { _ in count.withLock { $0 += 1 } }
        gate.enabledFeatures = .all
        gate.enableFeatures(.all)
        withExtendedLifetime(token) {}
        #expect(count.withLock { $0 } == 0)
    }

    @Test func cancellingOrReleasingTheTokenStopsCallbacks() {
        let gate = manager([])
        let cancelled = LockedValue(0)
        let released = LockedValue(0)
        let token = gate.observe { _ in cancelled.withLock { $0 += 1 } }
        var releasable: ObservationToken? = gate.observe { _ in released.withLock { $0 += 1 } }
        gate.enableFeatures(.push)
        token.cancel()
        token.cancel()
        releasable = nil
        gate.enableFeatures(.analytics)
        #expect(cancelled.withLock { $0 } == 1)
        #expect(released.withLock { $0 } == 1)
        #expect(releasable == nil)
    }

    /// A handler that holds the last reference to the manager (a buffer's observer does, through the buffer) is
    /// released after the manager's lock, so its deinit can take that lock: before, cancelling deadlocked.
    @Test func cancellingAHandlerThatHoldsTheLastReferenceToTheManagerReleasesIt() {
        weak var released: PrivacyManager?
        let token: ObservationToken = {
            let gate = manager([])
            released = gate
            return gate.observe { _ in _ = gate.isEnabled(.push) }
        }()
        #expect(released != nil, "the handler keeps the manager alive")
        let finished = DispatchSemaphore(value: 0)
        Thread {
            token.cancel()
            finished.signal()
        }.start()
        #expect(finished.wait(timeout: .now() + 30) == .success, "cancelling deadlocked in the manager's deinit")
        #expect(released == nil)
    }

    @Test func anObserverMayChangeFeaturesAndStillSeesEveryChangeInOrder() {
        let gate = manager([])
        let seen = Collector<Feature>()
        let token = gate.observe { change in
            seen.append(change.current)
            // Re-entrant: enabling push also enables analytics.
            if change.enabled.contains(.push) { gate.enableFeatures(.analytics) }
        }
        gate.enableFeatures(.push)
        withExtendedLifetime(token) {}
        #expect(seen.all == [.push, [.push, .analytics]])
    }

    @Test func theDisableCountGrowsOnEveryRevocationEdgeOfItsFlagsWhicheverLayerRevokes() async throws {
        let gate = manager([.analytics, .push])
        #expect(gate.disableCount(of: .all) == 0)
        gate.disableFeatures(.analytics)
        gate.enableFeatures(.analytics)
        gate.remoteDisabledFeatures = [.analytics, .push]  // two flags, two edges
        gate.remoteDisabledFeatures = []
        gate.disableFeatures(.contacts)  // off already: no edge
        gate.enableFeatures(.messageCenter)
        #expect(gate.disableCount(of: .analytics) == 2)
        #expect(gate.disableCount(of: .push) == 1)
        #expect(gate.disableCount(of: [.analytics, .push]) == 3)
        #expect(gate.disableCount(of: [.contacts, .messageCenter]) == 0)
        // A consent denial is a revocation too.
        let consent = ConsentManager(privacy: gate, ledger: InMemoryConsentLedger())
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        #expect(gate.disableCount(of: .analytics) == 3, "attaching consent withheld analytics")
        try await consent.setStatus(.denied, for: .analytics, source: .user)
        #expect(gate.disableCount(of: .analytics) == 4)
    }

    @Test func anObserverRegisteredDuringDeliverySeesOnlyLaterChanges() {
        // The first observer changes features re-entrantly (queueing a second change) and registers a late
        // observer while the first change is still being delivered. The late observer must see neither the change
        // being delivered nor the one queued before it registered: only the third.
        let gate = manager([])
        let late = Collector<FeatureChange>()
        let lateToken = LockedValue<ObservationToken?>(nil)
        let token = gate.observe { change in
            guard change.current == .push else { return }
            gate.enableFeatures(.analytics)
            lateToken.withLock { $0 = gate.observe { late.append($0) } }
        }
        gate.enableFeatures(.push)
        gate.enableFeatures(.contacts)
        withExtendedLifetime(token) {}
        lateToken.withLock { _ in }
        #expect(late.all == [FeatureChange(previous: [.push, .analytics], current: [.push, .analytics, .contacts])])
    }

    @Test func updatesStartWithTheCurrentSetThenYieldEachRealChange() async {
        let gate = manager(.push)
        var iterator = gate.updates.makeAsyncIterator()
        #expect(await iterator.next() == .push)
        gate.enableFeatures(.push)  // no-op
        gate.remoteDisabledFeatures = .contacts  // no-op for the effective set
        gate.enableFeatures(.analytics)
        gate.disableFeatures(.all)
        #expect(await iterator.next() == [.push, .analytics])
        #expect(await iterator.next() == [])
    }

    @Test func eachIterationIsAnIndependentSubscription() async {
        let gate = manager([])
        var first = gate.updates.makeAsyncIterator()
        gate.enableFeatures(.push)
        var second = gate.updates.makeAsyncIterator()
        gate.enableFeatures(.analytics)
        #expect(await first.next() == [])
        #expect(await first.next() == .push)
        #expect(await first.next() == [.push, .analytics])
        #expect(await second.next() == .push)
        #expect(await second.next() == [.push, .analytics])
    }

    @Test func updatesEndWhenTheManagerIsGone() async {
        var gate: PrivacyManager? = manager(.push)
        var iterator = gate!.updates.makeAsyncIterator()
        #expect(await iterator.next() == .push)
        gate = nil
        #expect(await iterator.next() == nil)
    }
}

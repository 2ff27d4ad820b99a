import FeatureGate
import Foundation
import Testing

/// Runs `body` on a new thread and returns once it finished.
private func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    done.wait()
}

/// Registers two observers through `observe`; the first one's handler cancels the second from another thread and
/// waits for that cancel to return; then `change` makes one change. Returns whether the cancel returned, and how
/// many times the second handler ran after it had.
private func cancelWhileAnEarlierHandlerRuns(
    observe: (@escaping @Sendable () -> Void) -> ObservationToken,
    change: () async -> Void
) async -> (cancelReturned: Bool, lateCalls: Int) {
    let lateCalls = LockedValue(0)
    let second = LockedValue<ObservationToken?>(nil)
    let cancelReturned = LockedValue(false)
    let first = observe {
        onAnotherThread {
            second.withLock { $0 }?.cancel()
            cancelReturned.withLock { $0 = true }
        }
    }
    let token = observe {
        if cancelReturned.withLock({ $0 }) { lateCalls.withLock { $0 += 1 } }
    }
    second.withLock { $0 = token }
    await change()
    withExtendedLifetime(first) {}
    return (cancelReturned.withLock { $0 }, lateCalls.withLock { $0 })
}

/// Issue 17 part 4: once `cancel()` of an observation returns, its handler is never called again, whoever delivers.
@Suite struct ObservationCancelTests {
    /// The delivering thread took its list of observers, then another thread cancelled the second one while the
    /// first one's handler ran: before, the second handler still ran after its `cancel()` had returned.
    @Test func anObserverCancelledWhileAnEarlierOneRunsIsNotCalled() async {
        let gate = manager([])
        let (cancelReturned, lateCalls) = await cancelWhileAnEarlierHandlerRuns(
            observe: { body in gate.observe { _ in body() } }, change: { gate.enableFeatures(.push) })
        #expect(cancelReturned)
        #expect(lateCalls == 0)
    }

    /// A cancel from another thread while the handler runs returns only once the handler returned.
    @Test func cancelWaitsForTheHandlerRunningOnAnotherThread() {
        let gate = manager([])
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let cancelReturned = LockedValue(false)
        let sawCancelReturnedInside = LockedValue(false)
        let token = gate.observe { _ in
            entered.signal()
            release.wait()
            // Give a cancel that does not wait every chance to return first.
            Thread.sleep(forTimeInterval: 0.02)
            if cancelReturned.withLock({ $0 }) { sawCancelReturnedInside.withLock { $0 = true } }
        }
        let delivering = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            gate.enableFeatures(.push)
            delivering.signal()
        }
        entered.wait()
        let cancelled = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            token.cancel()
            cancelReturned.withLock { $0 = true }
            cancelled.signal()
        }
        release.signal()
        cancelled.wait()
        delivering.wait()
        #expect(!sawCancelReturnedInside.withLock { $0 })
    }

    /// A handler that cancels its own token does not deadlock, and is not called again.
    @Test func aHandlerMayCancelItsOwnToken() {
        let gate = manager([])
        let calls = LockedValue(0)
        let token = LockedValue<ObservationToken?>(nil)
        token.withLock {
            $0 = gate.observe { _ in
                calls.withLock { $0 += 1 }
                token.withLock { $0 }?.cancel()
            }
        }
        gate.enableFeatures(.push)
        gate.enableFeatures(.analytics)
        #expect(calls.withLock { $0 } == 1)
    }

    /// 4 threads change features while 4 others register observers and cancel them, 8,000 observations in all:
    /// no handler runs after its cancel returned, and no thread deadlocks.
    @Test func noHandlerRunsAfterItsCancelReturnedUnderConcurrentDelivery() async {
        let gate = manager([])
        let lateCalls = LockedValue(0)
        // An earlier observer that takes a moment widens the gap between the delivering thread taking its list of
        // observers and calling the later ones.
        let slow = gate.observe { _ in usleep(20) }
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    let flags: [Feature] = [.push, .analytics, .contacts, .messageCenter]
                    for round in 0..<2_000 {
                        let flag = flags[(writer + round) % flags.count]
                        if round % 2 == 0 { gate.enableFeatures(flag) } else { gate.disableFeatures(flag) }
                    }
                }
            }
            for _ in 0..<4 {
                group.addTask {
                    for round in 0..<2_000 {
                        let cancelled = LockedValue(false)
                        let token = gate.observe { _ in
                            if cancelled.withLock({ $0 }) { lateCalls.withLock { $0 += 1 } }
                        }
                        // Let a delivery take the new observer in its list before the cancel, every other round.
                        if round % 2 == 0 { usleep(30) }
                        token.cancel()
                        cancelled.withLock { $0 = true }
                    }
                }
            }
        }
        withExtendedLifetime(slow) {}
        #expect(lateCalls.withLock { $0 } == 0)
    }

    /// The consent manager's observers follow the same rule: an observer cancelled from another thread while an
    /// earlier observer's handler runs is not called for that change.
    @Test func aConsentObserverCancelledWhileAnEarlierOneRunsIsNotCalled() async {
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger())
        let (cancelReturned, lateCalls) = await cancelWhileAnEarlierHandlerRuns(
            observe: { body in consent.observe { _ in body() } },
            change: { _ = try? await consent.setStatus(.granted, for: .analytics, source: .user) })
        #expect(cancelReturned)
        #expect(lateCalls == 0)
    }

    /// 2,000 consent observers registered and cancelled while 2,000 consent changes are delivered: none is
    /// called after its cancel returned; a handler that cancels its own token does not deadlock.
    @Test func noConsentHandlerRunsAfterItsCancelReturned() async {
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger())
        let lateCalls = LockedValue(0)
        let selfCancelling = LockedValue<ObservationToken?>(nil)
        let selfCalls = LockedValue(0)
        let slow = consent.observe { _ in usleep(20) }
        selfCancelling.withLock {
            $0 = consent.observe { _ in
                selfCalls.withLock { $0 += 1 }
                selfCancelling.withLock { $0 }?.cancel()
            }
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for round in 0..<2_000 {
                    _ = try? await consent.setStatus(
                        round % 2 == 0 ? .granted : .denied, for: .analytics, source: .user)
                }
            }
            for _ in 0..<2 {
                group.addTask {
                    for _ in 0..<1_000 {
                        let cancelled = LockedValue(false)
                        let token = consent.observe { _ in
                            if cancelled.withLock({ $0 }) { lateCalls.withLock { $0 += 1 } }
                        }
                        token.cancel()
                        cancelled.withLock { $0 = true }
                    }
                }
            }
        }
        withExtendedLifetime(slow) {}
        #expect(lateCalls.withLock { $0 } == 0)
        #expect(selfCalls.withLock { $0 } == 1)
    }
}

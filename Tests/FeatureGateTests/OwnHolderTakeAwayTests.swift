import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// A take-away made while a holder of this process (its own fold of a backlog, say) keeps the data directory's lock
/// returns within the same bound as behind another process, durable as an intent; it does not wait for the holder.
@Suite struct OwnHolderTakeAwayTests {
    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])

    enum TakeAway: String, CaseIterable {
        case disable, denial
    }

    @Test(arguments: TakeAway.allCases)
    func aTakeAwayBehindThisProcesssOwnHolderReturnsWhileItHoldsAndIsDurable(kind: TakeAway) async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let (privacy, consent) = launchGateAndConsent(on: data, policy: Self.policy)
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        privacy.enableFeatures(.push)

        // This process's own holder: it lets go when told, or 1.5 s after the take-away began (far past its 100 ms
        // bound, short of the 2 s other waits give this process's own holders).
        let (held, started) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let release = DispatchSemaphore(value: 0)
        let letGo = LockedValue(false)
        Thread.detachNewThread {
            _ = AtomicFile.withLock(of: data.stateFile, waitingAtMost: nil) {
                held.signal()
                started.wait()
                _ = release.wait(timeout: .now() + 1.5)
                letGo.withLock { $0 = true }
            }
        }
        held.wait()
        let returnedWhileHeld = LockedValue<Bool?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            started.signal()
            switch kind {
            case .disable: privacy.disableFeatures(.push)
            case .denial: _ = try? await consent.setStatus(.denied, for: .analytics, source: .user)
            }
            returnedWhileHeld.withLock { $0 = !letGo.withLock { $0 } }
            done.signal()
        }
        await Task.detached { done.wait() }.value
        // Durable before the holder lets go: a fresh start (a kill now) reads it from the intents.
        let fresh = launchGateAndConsent(on: data, policy: Self.policy)
        let freshStatus = await fresh.consent.status(for: .analytics)
        release.signal()

        #expect(returnedWhileHeld.withLock { $0 } == true, "\(kind) waited for this process's own holder")
        switch kind {
        case .disable: #expect(!fresh.privacy.isEnabled(.push))
        case .denial: #expect(freshStatus == .denied && !fresh.privacy.isEnabled(.analytics))
        }
    }
}

import FeatureGate
import Foundation
import NoopRuntime
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A subsystem running by consent whose purge deletes one queued item; with `failing`, its first purge fails (the
/// file was busy) and later ones find nothing left.
private final class QueueSubsystem: Subsystem {
    let name = "analytics"
    let requiredFeatures: Feature = .analytics
    let failing: Bool
    private let purges = LockedValue(0)

    init(failing: Bool) { self.failing = failing }

    func start() async throws {}
    func stop(reason: StopReason) async {}
    func purge() async -> PurgeReport {
        let first = purges.withLock { count in
            count += 1
            return count == 1
        }
        guard first else { return .empty }
        return failing
            ? PurgeReport(failures: ["analytics/queue.jsonl: busy"])
            : PurgeReport(removedFiles: ["analytics/queue.jsonl"], droppedItems: 1)
    }
}

/// Runs the jobs of the tasks that prefer it on one dispatch queue, outside the cooperative pool, so a test may
/// block it.
private final class DedicatedThreadExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "RevocationReceiptTests")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// The receipt of a revoke-all: what it stopped and purged is in its report, however early the runtime got to it.
@Suite struct RevocationReceiptTests {
    /// A gate with consent, a runtime running `subsystem` because analytics was granted, and a revocation whose
    /// step observer holds revoke-all back, right after it switched everything off, until the runtime has purged:
    /// the earliest the runtime can get there.
    private static func revokeWhileTheRuntimePurgesFirst(
        _ subsystem: QueueSubsystem
    ) async throws -> (RevocationReport, SubsystemRuntime) {
        let privacy = gate()
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(subsystem)
        runtime.start()
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        await runtime.settle()
        #expect(runtime.phase(of: subsystem) == .running)

        var revocation = ConsentRevocation(
            consent: consent, runtime: runtime, identifier: AnonymousIdentifier(privacy: privacy, url: nil),
            deadline: unhurriedDeadline)
        revocation.stepObserver = { step in
            guard step == .recorded else { return }
            // Everything is off now; wait (on this thread, as a slow ledger would) until the runtime has purged.
            let deadline = Date().addingTimeInterval(60)
            while !runtime.purges().contains(where: { $0.subsystem == "analytics" }) && Date() < deadline {
                usleep(1_000)
            }
        }
        // On a thread of its own: the wait above must not hold a thread the runtime's purge needs.
        let report = await withTaskExecutorPreference(DedicatedThreadExecutor()) {
            await revocation.revokeAll()
        }
        #expect(runtime.purges().contains { $0.subsystem == "analytics" })
        return (report, runtime)
    }

    @Test func aSubsystemRunningByConsentThatRevokeAllPurgesIsInTheReport() async throws {
        let (report, _) = try await Self.revokeWhileTheRuntimePurgesFirst(QueueSubsystem(failing: false))

        #expect(report.purges.map(\.subsystem) == ["analytics"])
        #expect(report.totalPurged.removedFiles == ["analytics/queue.jsonl"])
        #expect(report.totalPurged.droppedItems == 1)
        #expect(report.stoppedSubsystems == ["analytics"])
        #expect(report.isComplete)
        #expect(String(describing: report).contains("purged analytics: 1 file"))
    }

    @Test func aPurgeThatFailsWhileRevokeAllSwitchesEverythingOffMakesTheReportIncomplete() async throws {
        let (report, _) = try await Self.revokeWhileTheRuntimePurgesFirst(QueueSubsystem(failing: true))

        // Purged on the edge, where it failed, and again by the settle revoke-all asks for: both are in the receipt.
        #expect(report.purges.map(\.subsystem) == ["analytics"])
        #expect(report.totalPurged.failures == ["analytics/queue.jsonl: busy"])
        #expect(!report.isComplete)
    }
}

/// A push registration whose start waits until the test releases it: a start under way.
private final class SlowStartingPush: Subsystem {
    let name = "push"
    let requiredFeatures: Feature = .push
    let starting = AsyncPause()

    func start() async throws { await starting.pause() }
    func stop(reason: StopReason) async {}
    func purge() async -> PurgeReport { PurgeReport(removedFiles: ["push/registration.json"]) }
}

/// The receipt names a subsystem whose start was under way when revoke-all began.
@Suite struct RevocationStartUnderWayTests {
    /// Starts `subsystem` (push, on), waits until its start is under way (`starting`), then revokes all, letting
    /// the start go on once everything is off.
    private func revokeWhileStarting(_ subsystem: any Subsystem, _ starting: AsyncPause) async -> RevocationReport {
        let privacy = gate(.push)
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(subsystem)
        runtime.start()
        await starting.arrived.wait()  // its start is under way

        var revocation = ConsentRevocation(
            consent: consent, runtime: runtime, identifier: AnonymousIdentifier(privacy: privacy, url: nil),
            deadline: unhurriedDeadline)
        revocation.stepObserver = { step in if step == .recorded { starting.released.open() } }
        return await revocation.revokeAll()
    }

    @Test func aStartUnderWayWhenRevokeAllBeganIsNamedInTheReceipt() async throws {
        let push = SlowStartingPush()
        // The start finishes once everything is off: the runtime then stops and purges it.
        let report = await revokeWhileStarting(push, push.starting)
        #expect(report.stoppedSubsystems == ["push"])
        #expect(report.purges.map(\.subsystem) == ["push"])
        #expect(String(describing: report).contains("stopped: push"))
    }

    @Test func aStartUnderWayThatFailsOnceRevokedIsNamedAsStoppedInTheReceipt() async throws {
        let push = FailingStartPush()
        let report = await revokeWhileStarting(push, push.starting)
        #expect(report.stoppedSubsystems == ["push"])
        #expect(report.purges.map(\.subsystem) == ["push"])
        #expect(String(describing: report).contains("stopped: push"))
    }
}

/// A push registration whose start, under way, fails once the revocation closed its gate (its request is refused).
private final class FailingStartPush: Subsystem {
    let name = "push"
    let requiredFeatures: Feature = .push
    let starting = AsyncPause()

    func start() async throws {
        await starting.pause()
        throw GatedIOError.gateClosed(.push)
    }
    func stop(reason: StopReason) async {}
    func purge() async -> PurgeReport { PurgeReport(removedFiles: ["push/registration.json"]) }
}

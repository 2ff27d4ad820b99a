import FeatureGate
import Foundation
import NoopRuntime
import Testing

/// How a revocation lands at a pause point.
enum RevocationKind: String, CaseIterable, Sendable {
    /// `ConsentRevocation.revokeAll()`.
    case revokeAll
    /// The app disables analytics, then the runtime settles.
    case disable
    /// The user denies analytics consent, then the runtime settles.
    case deny
    /// Disabled and enabled again before the runtime got round to it.
    case flicker
}

/// One step of a schedule.
enum ScheduleStep: CustomStringConvertible, Sendable {
    case start, write, track(Int), flush, grant, deny, disable, settle

    var description: String {
        switch self {
        case .start: "start"
        case .write: "write"
        case .track(let count): "track:\(count)"
        case .flush: "flush"
        case .grant: "grant"
        case .deny: "deny"
        case .disable: "disable"
        case .settle: "settle"
        }
    }

    static func random(using random: inout SeededGenerator) -> ScheduleStep {
        switch Int.random(in: 0..<12, using: &random) {
        case 0, 1: .write
        case 2, 3, 4: .track(Int.random(in: 1...5, using: &random))
        case 5, 6, 7: .flush
        case 8: .grant
        case 9: .deny
        case 10: .disable
        default: .settle
        }
    }
}

/// Revocation at any moment: R1-R3 checked with a revocation landing at every I/O point of every flow
/// (start-up, write, track → flush → retry, opt-out, purge), and at random points of thousands of seeded random
/// schedules with injected faults.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ScheduleExplorationTests {
    /// What one run explored, and what it broke.
    struct Outcome {
        var reachedPause: Bool
        var pausedInSchedule: Bool
        var pointsReached: Int
        var violations: [String]
    }

    /// Runs `steps` in a world whose `pauseAt`-th I/O point lands a `kind` revocation right there, then checks
    /// R1-R3. Every schedule ends with a revoke-all, after which the storage must be empty (R2).
    static func run(
        _ steps: [ScheduleStep],
        pauseAt: Int?,
        kind: RevocationKind,
        seed: UInt64 = 0,
        faultRate: Double = 0,
        failingUploads: Int = 0
    ) async throws -> Outcome {
        let points = IOPoints(pauseAt: pauseAt, seed: seed, faultRate: faultRate)
        let world = try await ExplorationWorld(points: points)
        world.network.failingUploads.store(failingUploads, ordering: .relaxed)
        let violations = Collector<String>()
        let hold = LockedValue<Latch?>(nil)
        let revoking = LockedValue<Task<Void, Never>?>(nil)

        @Sendable func checkEmpty(_ when: String) {
            if !world.inner.names.isEmpty { violations.append("R2: \(when) the storage holds \(world.inner.names)") }
            let buffer = world.subsystem.buffer
            if buffer.bufferedCount != 0 || buffer.backlogs.values.contains(where: { $0 > 0 }) {
                violations.append("R2: \(when) the buffer still holds events")
            }
        }
        /// The rest of the revocation, on a task of its own; the script waits for it after its current step.
        @Sendable func finish(_ body: @escaping @Sendable () async -> Void) {
            let latch = Latch()
            hold.withLock { $0 = latch }
            revoking.withLock {
                $0 = Task {
                    await body()
                    latch.open()
                }
            }
        }
        @Sendable func settleAndCheck() async {
            await world.runtime.settle()
            if world.runtime.phase(of: world.subsystem) != .running { checkEmpty("when settle() returned,") }
        }
        @Sendable func closeGate() {
            switch kind {
            case .revokeAll:
                world.privacy.disableFeatures(.analytics)
                finish {
                    let report = await world.revocation.revokeAll()
                    if report.totalPurged.failures.isEmpty { checkEmpty("when revokeAll() returned,") }
                }
            case .disable:
                world.privacy.disableFeatures(.analytics)
                finish { await settleAndCheck() }
            case .flicker:
                world.privacy.disableFeatures(.analytics)
                world.privacy.enableFeatures(.analytics)
                finish { await world.runtime.settle() }
            case .deny:
                break
            }
        }
        points.onPause.withLock {
            $0 = (
                sync: {
                    guard kind == .deny else { return closeGate() }
                    // The denial goes through the consent actor; wait (without suspending) until it closed the gate.
                    // Bounded: this blocks a thread of the cooperative pool, which the actor needs too, and other
                    // tests may keep the pool's other threads. Past the bound the denial lands a little later.
                    finish {
                        _ = try? await world.consent.setStatus(.denied, for: .analytics, source: .user)
                        await settleAndCheck()
                    }
                    let giveUp = ContinuousClock.now + .seconds(10)
                    while world.privacy.isEnabled(.analytics) && ContinuousClock.now < giveUp { usleep(50) }
                },
                async: {
                    guard kind == .deny else { return closeGate() }
                    _ = try? await world.consent.setStatus(.denied, for: .analytics, source: .user)
                    finish { await settleAndCheck() }
                }
            )
        }

        for step in steps {
            switch step {
            case .start:
                world.runtime.start()
                await world.runtime.settle()
            case .write:
                _ = try? world.subsystem.storage.write(Data("profile".utf8), to: "profile")
            case .track(let count):
                world.track(count)
            case .flush:
                _ = await world.subsystem.buffer.flush()
            case .grant:
                _ = try? await world.consent.setStatus(.granted, for: .analytics, source: .user)
                world.privacy.enableFeatures(.analytics)
                await world.runtime.settle()
            case .deny:
                _ = try? await world.consent.setStatus(.denied, for: .analytics, source: .user)
                await world.runtime.settle()
            case .disable:
                world.privacy.disableFeatures(.analytics)
                await world.runtime.settle()
            case .settle:
                await world.runtime.settle()
            }
            // A revocation landed during this step: let it finish (and be checked) before going on.
            if let latch = hold.withLock({ state in
                defer { state = nil }; return state
            }) {
                await latch.wait()
            }
        }
        await revoking.withLock { $0 }?.value
        // The final revoke-all is the check, not part of the schedule: nothing lands inside it.
        points.onPause.withLock { $0 = nil }
        let pausedInSchedule = points.pausedAt != nil
        let report = await world.revocation.revokeAll()
        if report.totalPurged.failures.isEmpty { checkEmpty("after the final revokeAll(),") }
        return Outcome(
            reachedPause: points.pausedAt != nil,
            pausedInSchedule: pausedInSchedule,
            pointsReached: points.reached.count,
            violations: violations.all + world.model.violations + world.optOutViolations()
        )
    }

    /// Every flow, in one script: start-up, a write, track → flush → retry (the first upload fails), then a
    /// disable (opt-out, purge).
    static let flows: [ScheduleStep] = [.start, .write, .track(3), .flush, .disable]

    @Test(arguments: RevocationKind.allCases)
    func aRevocationAtEveryPausePointOfEveryFlowKeepsR1ToR3(kind: RevocationKind) async throws {
        var explored = 0
        var pauseAt = 1
        while true {
            let outcome = try await Self.run(Self.flows, pauseAt: pauseAt, kind: kind, failingUploads: 1)
            // A pause reached only in the final revoke-all (which is the check, not the schedule) ends it too.
            guard outcome.reachedPause, outcome.pausedInSchedule else { break }
            explored += 1
            for violation in outcome.violations {
                Issue.record("\(kind) at pause point \(pauseAt) of \(Self.flows): \(violation)")
            }
            pauseAt += 1
        }
        // Start-up 1, write 1, flush 3 + sleep 1 + retry 4, opt-out 1, purge 1: the flows have at least 12.
        #expect(explored >= 12, "only \(explored) pause points were reached")
        if ProcessInfo.processInfo.environment["EXPLORATION_SUMMARY"] != nil {
            print("exploration: \(kind) landed at \(explored) pause points")
        }
    }

    @Test func thousandsOfSeededRandomSchedulesKeepR1ToR3() async throws {
        let base = UInt64(ProcessInfo.processInfo.environment["EXPLORATION_SEED"] ?? "") ?? 0x5EED_2026
        let count = Int(ProcessInfo.processInfo.environment["EXPLORATION_SCHEDULES"] ?? "") ?? 2_000
        var failures = 0
        var reached = 0
        for index in 0..<count {
            let seed = base &+ UInt64(index)
            var random = SeededGenerator(seed: seed)
            let steps =
                [ScheduleStep.start]
                + (0..<Int.random(in: 4...10, using: &random)).map { _ in
                    ScheduleStep.random(using: &random)
                }
            let pauseAt = Int.random(in: 1...14, using: &random)
            let kind = RevocationKind.allCases.randomElement(using: &random) ?? .revokeAll
            let outcome = try await Self.run(
                steps, pauseAt: pauseAt, kind: kind, seed: seed, faultRate: 0.15,
                failingUploads: Int.random(in: 0...2, using: &random))
            if outcome.pausedInSchedule { reached += 1 }
            for violation in outcome.violations {
                failures += 1
                let reached = outcome.reachedPause ? "reached" : "not reached"
                let schedule = "steps \(steps), \(kind) at point \(pauseAt) (\(reached))"
                Issue.record(
                    "seed \(seed) (EXPLORATION_SEED=\(seed) EXPLORATION_SCHEDULES=1): \(schedule): \(violation)")
            }
            if failures > 20 { break }
            #expect(outcome.pointsReached > 0, "seed \(seed): the schedule reached no I/O point")
        }
        if ProcessInfo.processInfo.environment["EXPLORATION_SUMMARY"] != nil {
            print("exploration: \(count) random schedules from seed \(base), \(reached) reached their pause point")
        }
    }
}

import FeatureGate
import Foundation

extension SubsystemRuntime {
    enum Mode { case idle, following, shutDown }

    struct Entry {
        let subsystem: any Subsystem
        let needs: Feature
        let requirement: FeatureRequirement
        let permit = OneShotPermit()
        var phase = SubsystemPhase.stopped
        /// Whether some change since the last pass met the requirement: if it is unmet again by the time of the
        /// pass, the subsystem is purged even though it never started.
        var metSinceLastPass = false
        /// The needed features that some change since the last pass left disabled (with the requirement unmet):
        /// if the requirement is met again by the time of the pass, the running subsystem still goes through the
        /// disable edge it missed.
        var disabledSinceLastPass: Feature = []
        /// Whether the last thing done to the subsystem was a purge without failures: nothing of it is left to
        /// delete, so ``SubsystemRuntime/settlePurgingStoppedSubsystems()`` skips it. False at registration: an
        /// earlier run may have left data behind.
        var isPurged = false
        /// The pass whose observer reports this subsystem's edges while it runs (set when a pass decides to start
        /// it); `nil` while stopped, when the runtime's long-lived observer does.
        var edgeEpoch: UInt64?

        init(subsystem: any Subsystem, needs: Feature, requirement: FeatureRequirement) {
            self.subsystem = subsystem
            self.needs = needs
            self.requirement = requirement
        }

        func isMet(by features: Feature) -> Bool { requirement.isMet(by: features, for: needs) }
    }

    struct State {
        var entries: [Entry] = []
        var mode = Mode.idle
        var token: ObservationToken?
        /// Passes requested and passes completed; a waiter with ticket `t` resumes once `completed >= t`.
        var requested: UInt64 = 0
        var completed: UInt64 = 0
        var workerActive = false
        var waiters: [(ticket: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
        var journal: [LifecycleEvent] = []
        var lastSequence: UInt64 = 0
        /// Set by ``SubsystemRuntime/settlePurgingStoppedSubsystems()``; the next pass purges stopped subsystems
        /// that are not known to be clean, and clears it.
        var purgeStoppedRequested = false
        /// Set by ``SubsystemRuntime/start()`` to finish the pending revocation with this key: the next pass also
        /// purges the subsystems it is about to start, and marks the revocation's purge done if none failed.
        var purgeBeforeStarting: UUID?
        /// Set by ``SubsystemRuntime/start()`` to what the gate's store records as owed purges
        /// (`PrivacyManager.owedPurges`): the next pass purges the stopped subsystems that need one of these flags.
        var owedAtStart: Feature = []
        /// Passes so far; each registers an observer before it reads the gate.
        var epoch: UInt64 = 0
        /// The observers of passes that started a subsystem still running, by pass.
        var passTokens: [UInt64: ObservationToken] = [:]
        var callInFlight: CallInFlight?

        /// Takes the observer of pass `epoch` out once no subsystem takes its edges from it; the caller cancels
        /// it after the lock.
        mutating func releasePassToken(_ epoch: UInt64) -> ObservationToken? {
            guard !entries.contains(where: { $0.edgeEpoch == epoch }) else { return nil }
            return passTokens.removeValue(forKey: epoch)
        }

        /// Schedules a pass; returns whether the caller must start the worker.
        mutating func requestPass() -> Bool {
            requested += 1
            guard !workerActive else { return false }
            workerActive = true
            return true
        }
    }
}

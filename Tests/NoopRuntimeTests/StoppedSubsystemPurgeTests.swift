import FeatureGate
import NoopRuntime
import Testing

@Suite struct StoppedSubsystemPurgeTests {
    @Test func aSubsystemThatNeverRanIsPurgedOnceAndNotAgain() async {
        let privacy = gate()
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(RecordingSubsystem("push", needs: .push, log: log))
        runtime.register(RecordingSubsystem("contacts", needs: .contacts, log: log))
        runtime.start()
        await runtime.settle()
        #expect(log.all.isEmpty)

        await runtime.settlePurgingStoppedSubsystems()
        #expect(log.all == ["contacts.purge", "push.purge"])
        #expect(runtime.purges().map(\.subsystem) == ["contacts", "push"])

        await runtime.settlePurgingStoppedSubsystems()
        #expect(log.all == ["contacts.purge", "push.purge"])
    }

    @Test func runningSubsystemsAreLeftAloneAndPurgedOnlyAfterTheyRanAgain() async {
        let privacy = gate(.push)
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(RecordingSubsystem("push", needs: .push, log: log))
        runtime.start()
        await runtime.settlePurgingStoppedSubsystems()
        #expect(log.all == ["push.start"])

        privacy.disableFeatures(.push)
        await runtime.settle()
        // Purged on the edge: nothing left, so the forced purge skips it.
        await runtime.settlePurgingStoppedSubsystems()
        #expect(log.all == ["push.start", "push.stop", "push.purge"])

        privacy.enableFeatures(.push)
        await runtime.settle()
        privacy.disableFeatures(.push)
        await runtime.settlePurgingStoppedSubsystems()
        #expect(log.all == ["push.start", "push.stop", "push.purge", "push.start", "push.stop", "push.purge"])
    }

    @Test func aSubsystemWhoseStartFailedIsPurgedAgainWhenAsked() async {
        let privacy = gate()
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: privacy)
        let push = RecordingSubsystem("push", needs: .push, log: log)
        push.failStarts.store(1, ordering: .relaxed)
        runtime.register(push)
        runtime.start()
        await runtime.settlePurgingStoppedSubsystems()
        privacy.enableFeatures(.push)
        await runtime.settle()
        #expect(runtime.phase(of: push) == .startFailed)
        privacy.disableFeatures(.push)
        await runtime.settle()
        // The failed start may have written something; the edge purged it and left it clean.
        await runtime.settlePurgingStoppedSubsystems()
        #expect(log.all == ["push.purge", "push.start", "push.purge"])
    }

    @Test func subsystemsAreAlsoPurgedBeforeStartAndAfterShutdownButOnlyOnce() async {
        let privacy = gate()
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(RecordingSubsystem("push", needs: .push, log: log))
        await runtime.settle()
        #expect(log.all.isEmpty, "an ordinary settle before start calls nothing")
        await runtime.settlePurgingStoppedSubsystems()
        #expect(log.all == ["push.purge"], "files from an earlier run are purged even before start")
        runtime.start()
        await runtime.shutdown()
        await runtime.settlePurgingStoppedSubsystems()
        #expect(log.all == ["push.purge"], "already clean: not purged again")
    }
}

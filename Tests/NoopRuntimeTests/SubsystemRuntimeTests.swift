import FeatureGate
import NoopRuntime
import Testing

@Suite struct SubsystemRuntimeTests {
    @Test func startingWithEverythingDisabledCallsNoSubsystem() async {
        let privacy = gate()
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: privacy)
        let push = RecordingSubsystem("push", needs: .push, log: log)
        runtime.register(push)
        runtime.register(RecordingSubsystem("analytics", needs: .analytics, log: log))
        runtime.start()
        await runtime.settle()
        privacy.disableFeatures(.all)  // nothing to disable: not an edge
        await runtime.settle()

        #expect(log.all.isEmpty)
        #expect(runtime.events().isEmpty)
        #expect(runtime.phase(of: push) == .stopped)
        #expect(!runtime.exitPermit.isArmed)
    }

    @Test func nothingIsCalledBeforeStart() async {
        let privacy = gate(.all)
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(RecordingSubsystem("push", needs: .push, log: log))
        await runtime.settle()
        privacy.disableFeatures(.push)
        await runtime.settle()
        #expect(log.all.isEmpty)
    }

    @Test func subsystemsStartOnEnableAndStopThenPurgeOnDisableInOrder() async {
        let privacy = gate()
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(RecordingSubsystem("analytics", needs: .analytics, log: log))
        runtime.register(RecordingSubsystem("push", needs: .push, log: log))
        runtime.register(RecordingSubsystem("contacts", needs: .contacts, log: log))
        runtime.start()
        await runtime.settle()

        privacy.enableFeatures(.analytics)
        await runtime.settle()
        #expect(log.all == ["analytics.start"])

        privacy.enableFeatures([.push, .contacts])
        await runtime.settle()
        #expect(log.all == ["analytics.start", "push.start", "contacts.start"])

        privacy.disableFeatures(.all)
        await runtime.settle()
        // Stops and purges in reverse registration order.
        #expect(
            log.all == [
                "analytics.start", "push.start", "contacts.start",
                "contacts.stop", "contacts.purge", "push.stop", "push.purge", "analytics.stop", "analytics.purge",
            ]
        )
    }

    @Test func stopsRunBeforeStartsWithinOnePass() async {
        let privacy = gate(.analytics)
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(RecordingSubsystem("push", needs: .push, log: log))
        runtime.register(RecordingSubsystem("analytics", needs: .analytics, log: log))
        runtime.start()
        await runtime.settle()
        privacy.enabledFeatures = .push
        await runtime.settle()
        #expect(log.all == ["analytics.start", "analytics.stop", "analytics.purge", "push.start"])
    }

    @Test func featuresEnabledAtLaunchStartTheirSubsystems() async {
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: gate([.push, .messageCenter]))
        runtime.register(RecordingSubsystem("push", needs: .push, log: log))
        runtime.register(RecordingSubsystem("inbox", needs: .messageCenter, log: log))
        runtime.register(RecordingSubsystem("analytics", needs: .analytics, log: log))
        runtime.start()
        await runtime.settle()
        #expect(log.all == ["push.start", "inbox.start"])
    }

    @Test func aSubsystemNeedsAllOfItsFeatures() async {
        let privacy = gate()
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: privacy)
        let both = RecordingSubsystem("both", needs: [.push, .analytics], log: log)
        runtime.register(both)
        runtime.start()

        privacy.enableFeatures(.push)
        await runtime.settle()
        #expect(log.all.isEmpty)

        privacy.enableFeatures(.analytics)
        await runtime.settle()
        #expect(log.all == ["both.start"])
        #expect(runtime.phase(of: both) == .running)

        privacy.disableFeatures(.push)
        await runtime.settle()
        #expect(log.all == ["both.start", "both.stop", "both.purge"])
        #expect(runtime.events().map(\.kind).contains(.stopped(disabled: .push)))
    }

    @Test func aSubsystemThatNeedsAnyFeatureRunsUntilTheLastIsDisabled() async {
        let privacy = gate()
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(RecordingSubsystem("identifier", needs: .all, requirement: .any, log: log))
        runtime.start()

        privacy.enableFeatures(.push)
        await runtime.settle()
        privacy.enableFeatures(.analytics)
        privacy.disableFeatures(.push)
        await runtime.settle()
        #expect(log.all == ["identifier.start"])

        privacy.disableFeatures(.analytics)
        await runtime.settle()
        #expect(log.all == ["identifier.start", "identifier.stop", "identifier.purge"])
        #expect(runtime.events().map(\.kind).contains(.stopped(disabled: .all)))
    }

    @Test func repeatedChangesNeverRunTheSameEdgeTwice() async {
        let privacy = gate()
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(RecordingSubsystem("analytics", needs: .analytics, log: log))
        runtime.start()
        for _ in 0..<50 {
            privacy.enableFeatures(.analytics)
            privacy.enableFeatures(.push)  // unrelated change: not an edge for analytics
            await runtime.settle()
        }
        for _ in 0..<50 {
            privacy.disableFeatures(.analytics)
            await runtime.settle()
        }
        #expect(log.all == ["analytics.start", "analytics.stop", "analytics.purge"])
    }

    @Test func aChangeUndoneBeforeThePassIsPurgedButNeverStarted() async {
        let privacy = gate(.contacts)
        let log = Collector<String>()
        let blocker = Latch()
        let entered = Latch()
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(
            RecordingSubsystem("slow", needs: .contacts, log: log) {
                entered.open()
                await blocker.wait()
            }
        )
        runtime.register(RecordingSubsystem("analytics", needs: .analytics, log: log))
        runtime.start()
        await entered.wait()  // the first pass is stuck in slow.start

        privacy.enableFeatures(.analytics)
        privacy.disableFeatures(.analytics)
        blocker.open()
        await runtime.settle()

        #expect(log.all == ["slow.start", "analytics.purge"])
    }

    @Test func aDisableUndoneBeforeThePassStillStopsPurgesAndOptsOut() async {
        let privacy = gate([.contacts, .push])
        let log = Collector<String>()
        let transport = RecordingTransport()
        let optOut = GatedTransport(transport, features: .push, privacy: privacy, counter: IOCounter())
        let blocker = Latch()
        let entered = Latch()
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(RecordingSubsystem("push", needs: .push, log: log, optOutTransport: optOut))
        runtime.register(
            RecordingSubsystem("slow", needs: .contacts, log: log) {
                entered.open()
                await blocker.wait()
            }
        )
        runtime.start()
        await entered.wait()  // the first pass is stuck in slow.start, after push.start

        privacy.disableFeatures(.push)
        privacy.enableFeatures(.push)
        blocker.open()
        await runtime.settle()

        #expect(log.all == ["push.start", "slow.start", "push.stop", "push.purge", "push.start"])
        #expect(transport.paths() == ["/opt-out/push"])
        #expect(runtime.events().map(\.kind).contains(.stopped(disabled: .push)))
    }

    @Test func aFailedStartIsPurgedOnTheNextEdgeAndRetriedAfterIt() async {
        let privacy = gate()
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: privacy)
        let push = RecordingSubsystem("push", needs: .push, log: log)
        push.failStarts.store(1, ordering: .relaxed)
        runtime.register(push)
        runtime.start()

        privacy.enableFeatures(.push)
        await runtime.settle()
        #expect(runtime.phase(of: push) == .startFailed)
        await runtime.settle()  // no retry without an edge
        #expect(log.all == ["push.start"])

        privacy.disableFeatures(.push)
        await runtime.settle()
        #expect(log.all == ["push.start", "push.purge"])  // never started, so never stopped

        privacy.enableFeatures(.push)
        await runtime.settle()
        #expect(log.all == ["push.start", "push.purge", "push.start"])
        #expect(runtime.phase(of: push) == .running)
        #expect(runtime.events().map(\.kind).first == .startFailed("attempt 0 failed"))
    }

    @Test func registeringAfterStartStartsTheSubsystemIfItsFeaturesAreOn() async {
        let privacy = gate(.analytics)
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.start()
        await runtime.settle()
        runtime.register(RecordingSubsystem("analytics", needs: .analytics, log: log))
        runtime.register(RecordingSubsystem("push", needs: .push, log: log))
        await runtime.settle()
        #expect(log.all == ["analytics.start"])
    }

    @Test func shutdownStopsRunningSubsystemsWithoutPurgingAndIgnoresLaterChanges() async {
        let privacy = gate([.analytics, .push])
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(RecordingSubsystem("analytics", needs: .analytics, log: log))
        runtime.register(RecordingSubsystem("push", needs: .push, log: log))
        runtime.start()
        await runtime.settle()
        await runtime.shutdown()
        #expect(log.all == ["analytics.start", "push.start", "push.stop", "analytics.stop"])

        privacy.disableFeatures(.all)
        privacy.enableFeatures(.all)
        await runtime.settle()
        #expect(log.count == 4)
    }

    @Test func purgeReportsAfterAMarkSayWhatADisableDeleted() async {
        let privacy = gate([.analytics, .push])
        let log = Collector<String>()
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(RecordingSubsystem("analytics", needs: .analytics, log: log))
        runtime.register(RecordingSubsystem("push", needs: .push, log: log))
        runtime.start()
        await runtime.settle()

        let mark = runtime.lastEventSequence
        #expect(mark == 2)
        privacy.disableFeatures(.all)
        await runtime.settle()
        let purges = runtime.purges(after: mark)
        #expect(purges.map(\.subsystem) == ["push", "analytics"])
        #expect(purges.map(\.report.droppedItems) == [1, 1])
        #expect(purges.map(\.report.resetIdentifiers) == [["push"], ["analytics"]])
        #expect(runtime.purges(after: runtime.lastEventSequence).isEmpty)
    }

    @Test func theRuntimeExitPermitIsArmedOnlyOnceSomethingStarted() async {
        let privacy = gate()
        let runtime = SubsystemRuntime(privacy: privacy)
        runtime.register(RecordingSubsystem("push", needs: .push, log: Collector()))
        runtime.start()
        await runtime.settle()
        #expect(!runtime.exitPermit.isArmed)
        privacy.enableFeatures(.push)
        await runtime.settle()
        #expect(runtime.exitPermit.isArmed)
        privacy.disableFeatures(.push)
        await runtime.settle()
        #expect(runtime.exitPermit.spend())
        #expect(!runtime.exitPermit.spend())
    }
}

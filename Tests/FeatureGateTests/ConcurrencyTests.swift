import FeatureGate
import Testing

@Suite struct ConcurrencyTests {
    /// Sixteen tasks each own one flag and toggle it a thousand times; every toggle is a real change.
    @Test func concurrentEnableAndDisableLoseNoUpdateAndNotifyOncePerChangeInOrder() async throws {
        var catalog = FeatureCatalog.builtIn
        for bit in 16..<25 { catalog = try catalog.registering("custom_\(bit)", as: .custom(bit: bit)) }
        let allFlags = catalog.allFeatures
        let flags = allFlags.flags
        #expect(flags.count == 16)

        let store = RecordingFeatureStore()
        let gate = manager([], store: store, catalog: catalog)
        let changes = Collector<FeatureChange>()
        let token = gate.observe { changes.append($0) }
        let rounds = 1_000

        await withTaskGroup(of: Void.self) { group in
            for flag in flags {
                group.addTask {
                    for _ in 0..<rounds {
                        gate.enableFeatures(flag)
                        #expect(gate.isEnabled(flag))
                        gate.disableFeatures(flag)
                    }
                    gate.enableFeatures(flag)
                }
            }
            // Readers hammer the hot path meanwhile.
            for _ in 0..<2 {
                group.addTask {
                    var seen = 0
                    for _ in 0..<20_000 where gate.isAnyEnabled(allFlags) { seen += 1 }
                    _ = seen
                }
            }
        }
        withExtendedLifetime(token) {}

        #expect(gate.enabledFeatures == catalog.allFeatures)
        #expect(store.storedFeatures == catalog.allFeatures)
        let all = changes.all
        #expect(all.count == flags.count * (2 * rounds + 1))
        #expect(store.calls.saves == all.count)
        // Delivered in order: each change starts where the previous one ended.
        var current: Feature = []
        for change in all {
            #expect(change.previous == current)
            current = change.current
        }
        #expect(current == catalog.allFeatures)
    }

    @Test func remoteAndLocalWritersRacingLeaveAConsistentEffectiveSet() async {
        let gate = manager([])
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for index in 0..<5_000 { gate.remoteDisabledFeatures = index.isMultiple(of: 2) ? .analytics : [] }
                gate.remoteDisabledFeatures = .contacts
            }
            group.addTask {
                for _ in 0..<5_000 {
                    gate.enableFeatures([.analytics, .push])
                    gate.disableFeatures(.push)
                }
            }
        }
        #expect(gate.remoteDisabledFeatures == .contacts)
        #expect(gate.enabledFeatures == .analytics)
    }

    @Test func manySubscribersEachSeeTheFinalState() async {
        let gate = manager([])
        await withTaskGroup(of: Feature?.self) { group in
            for _ in 0..<50 {
                let iteratorBox = gate.updates
                group.addTask {
                    for await features in iteratorBox where features == .all { return features }
                    return nil
                }
            }
            group.addTask {
                for flag in Feature.all.flags {
                    for _ in 0..<100 {
                        gate.enableFeatures(flag)
                        gate.disableFeatures(flag)
                    }
                }
                gate.enabledFeatures = .all
                return nil
            }
            var finished = 0
            for await result in group where result == .all { finished += 1 }
            #expect(finished == 50)
        }
    }
}

import Benchmark
import FeatureGate

/// Benchmarks 1 and 2: `PrivacyManager.isEnabled` called from this module, as SDK code calls it, beside the floor (a
/// raw `Atomic<UInt>` relaxed load and mask), each on one thread and under contention.
///
/// Each call's result feeds a running count that is black-holed once per sample: a per-call `blackHole` would cost
/// more than the load it protects and hide any difference, while the count keeps every load alive (atomic loads are
/// never merged or hoisted out of the loop).
///
/// The contended variants run the same ``Contention`` harness around both: a second reader, and a toggler that flips
/// `.push` in the word being read (through the remote kill switch for the manager, a plain atomic for the floor).
func registerGateBenchmarks() {
    let manager = PrivacyManager(
        configuration: PrivacyConfiguration(enabledFeatures: [.analytics, .push]),
        store: InMemoryFeatureStore()
    )
    let raw = RawGate([.analytics, .push])

    Benchmark("Gate.isEnabled", configuration: .allocationFree(calls: .mega)) { benchmark in
        var hits = 0
        for _ in benchmark.scaledIterations {
            hits &+= manager.isEnabled(.analytics) ? 1 : 0
        }
        blackHole(hits)
    }

    Benchmark("Floor.rawLoad", configuration: .allocationFree(calls: .mega)) { benchmark in
        let mask = Feature.analytics.rawValue
        var hits = 0
        for _ in benchmark.scaledIterations {
            hits &+= raw.isEnabled(mask) ? 1 : 0
        }
        blackHole(hits)
    }

    let managerContention = Contention(manager)
    Benchmark(
        "Gate.isEnabled.contended",
        configuration: .allocationFree(calls: .mega, contended: true),
        closure: { benchmark in
            let flips = managerContention.flips
            managerContention.startReader(calls: benchmark.scaledIterations.count)
            var hits = 0
            for _ in benchmark.scaledIterations {
                hits &+= manager.isEnabled(.analytics) ? 1 : 0
            }
            managerContention.waitForReader()
            blackHole(hits)
            managerContention.recordFlips(since: flips, in: benchmark)
        },
        setup: { managerContention.start() },
        teardown: { managerContention.stop() }
    )

    let rawContention = Contention(raw)
    Benchmark(
        "Floor.rawLoad.contended",
        configuration: .allocationFree(calls: .mega, contended: true),
        closure: { benchmark in
            let flips = rawContention.flips
            let mask = Feature.analytics.rawValue
            rawContention.startReader(calls: benchmark.scaledIterations.count)
            var hits = 0
            for _ in benchmark.scaledIterations {
                hits &+= raw.isEnabled(mask) ? 1 : 0
            }
            rawContention.waitForReader()
            blackHole(hits)
            rawContention.recordFlips(since: flips, in: benchmark)
        },
        setup: { rawContention.start() },
        teardown: { rawContention.stop() }
    )
}

import Benchmark
import FeatureGate

/// Benchmarks 1 and 2: `PrivacyManager.isEnabled` called from this module, as SDK code calls it, beside the floor (a
/// raw `Atomic<UInt>` relaxed load and mask), on one thread and under contention.
///
/// Each call's result feeds a running count that is black-holed once per batch: a per-call `blackHole` would cost more
/// than the load it protects and hide any difference, while the count keeps every load alive (atomic loads are never
/// merged or hoisted out of the loop).
///
/// Under contention the two are measured in paired samples, inside one ``Contention`` harness: each sample times a
/// batch of `isEnabled` and a batch of raw loads back to back (order alternating), each batch made by the measured
/// thread and the second reader together while the toggler flips `.push` in both words. The ratio is taken per
/// sample, so load from other processes on the shared two-core machine, which comes and goes over milliseconds, falls
/// on both sides of it alike.
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

    let contention = Contention(manager, raw)
    Benchmark(
        "Contended.isEnabled-vs-rawLoad",
        configuration: .allocationFree(calls: .mega, extraMetrics: ContentionMetric.all + PairedMetric.all),
        closure: { benchmark in
            contention.beginMeasuredReader(benchmark)
            let flips = contention.flips
            let calls = benchmark.scaledIterations.count

            func timeIsEnabled() -> Duration {
                let start = ContinuousClock.now
                contention.startReader(calls: calls, on: .first)
                var hits = 0
                for _ in benchmark.scaledIterations {
                    hits &+= manager.isEnabled(.analytics) ? 1 : 0
                }
                contention.waitForReader()
                blackHole(hits)
                return start.duration(to: .now)
            }

            func timeRawLoad() -> Duration {
                let start = ContinuousClock.now
                contention.startReader(calls: calls, on: .second)
                let mask = Feature.analytics.rawValue
                var hits = 0
                for _ in benchmark.scaledIterations {
                    hits &+= raw.isEnabled(mask) ? 1 : 0
                }
                contention.waitForReader()
                blackHole(hits)
                return start.duration(to: .now)
            }

            let isEnabledTime: Duration
            let rawLoadTime: Duration
            if benchmark.currentIteration.isMultiple(of: 2) {
                isEnabledTime = timeIsEnabled()
                rawLoadTime = timeRawLoad()
            } else {
                rawLoadTime = timeRawLoad()
                isEnabledTime = timeIsEnabled()
            }
            contention.recordContention(flipsAtStart: flips, in: benchmark)
            PairedMetric.record(isEnabled: isEnabledTime, rawLoad: rawLoadTime, calls: calls, in: benchmark)
        },
        setup: { contention.start() },
        teardown: { contention.stop() }
    )
}

/// What the paired contended benchmark records per sample, besides its total time: each side's time per call and their
/// ratio. Recorded after the measured region ends.
enum PairedMetric {
    static var isEnabled: BenchmarkMetric { .custom("isEnabled ps per call", useScalingFactor: false) }
    static var rawLoad: BenchmarkMetric { .custom("rawLoad ps per call", useScalingFactor: false) }
    static var ratio: BenchmarkMetric { .custom("isEnabled per rawLoad x1000", useScalingFactor: false) }
    static var all: [BenchmarkMetric] { [isEnabled, rawLoad, ratio] }

    static func record(isEnabled: Duration, rawLoad: Duration, calls: Int, in benchmark: Benchmark) {
        let isEnabledPicoseconds = picoseconds(isEnabled)
        let rawLoadPicoseconds = picoseconds(rawLoad)
        benchmark.measurement(Self.isEnabled, isEnabledPicoseconds / calls)
        benchmark.measurement(Self.rawLoad, rawLoadPicoseconds / calls)
        benchmark.measurement(ratio, isEnabledPicoseconds * 1_000 / max(rawLoadPicoseconds, 1))
    }

    private static func picoseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1_000_000_000_000 + Int(attoseconds / 1_000_000)
    }
}

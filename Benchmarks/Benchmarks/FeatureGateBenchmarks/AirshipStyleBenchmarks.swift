import Benchmark
import FeatureGate

/// Benchmark 3: the Airship-style gate (``AirshipStyleGate``), read path on one thread and contended (the same
/// ``Contention`` harness as `Contended.isEnabled-vs-rawLoad`, around this gate alone), and its write path.
func registerAirshipStyleBenchmarks() {
    let gate = AirshipStyleGate(enabledFeatures: [.analytics, .push])

    Benchmark("AirshipStyle.isEnabled", configuration: .reported(calls: .kilo)) { benchmark in
        var hits = 0
        for _ in benchmark.scaledIterations {
            hits &+= gate.isEnabled(.analytics) ? 1 : 0
        }
        blackHole(hits)
    }

    let contention = Contention(gate)
    Benchmark(
        "AirshipStyle.isEnabled.contended",
        configuration: .reported(calls: .kilo, extraMetrics: ContentionMetric.all),
        closure: { benchmark in
            contention.beginMeasuredReader(benchmark)
            let flips = contention.flips
            contention.startReader(calls: benchmark.scaledIterations.count)
            var hits = 0
            for _ in benchmark.scaledIterations {
                hits &+= gate.isEnabled(.analytics) ? 1 : 0
            }
            contention.waitForReader()
            blackHole(hits)
            contention.recordContention(flipsAtStart: flips, in: benchmark)
        },
        setup: { contention.start() },
        teardown: { contention.stop() }
    )

    let changes = Counter()
    let writer = AirshipStyleGate(enabledFeatures: [.push], onChange: { changes.increment() })
    Benchmark("AirshipStyle.toggle", configuration: .reported(calls: .kilo)) { benchmark in
        let before = changes.value
        var on = writer.isEnabled(.analytics)
        for _ in benchmark.scaledIterations {
            if on { writer.disableFeatures(.analytics) } else { writer.enableFeatures(.analytics) }
            on.toggle()
        }
        if changes.value - before != benchmark.scaledIterations.count {
            benchmark.error("expected one notification per toggle")
        }
    }
}

import Benchmark

/// Two operations timed back to back in every sample, order alternating, with each side's time and their ratio
/// recorded as custom metrics: on this shared machine a ratio taken per sample is steady where two separately timed
/// benchmarks are not, since a slow moment falls on both sides alike.
///
/// The metrics are `"<first> ps per call"`, `"<second> ps per call"` and `"<first> per <second> x1000"`; `report.py`
/// reads the last as the pair's ratio. Record after the measured region ends.
struct PairedSample {
    let first: String
    let second: String

    var firstTime: BenchmarkMetric { .custom("\(first) ps per call", useScalingFactor: false) }
    var secondTime: BenchmarkMetric { .custom("\(second) ps per call", useScalingFactor: false) }
    var ratio: BenchmarkMetric { .custom("\(first) per \(second) x1000", useScalingFactor: false) }
    var metrics: [BenchmarkMetric] { [firstTime, secondTime, ratio] }

    /// Times `runFirst` and `runSecond` once each, in an order that alternates with the iteration, and records both
    /// times (divided by `calls`, the calls each side makes) and their ratio. Stops the measurement first.
    func measure(in benchmark: Benchmark, calls: Int = 1, _ runFirst: () -> Void, _ runSecond: () -> Void) {
        func timed(_ body: () -> Void) -> Duration {
            let start = ContinuousClock.now
            body()
            return start.duration(to: .now)
        }
        let firstDuration: Duration
        let secondDuration: Duration
        if benchmark.currentIteration.isMultiple(of: 2) {
            firstDuration = timed(runFirst)
            secondDuration = timed(runSecond)
        } else {
            secondDuration = timed(runSecond)
            firstDuration = timed(runFirst)
        }
        benchmark.stopMeasurement()
        let firstPicoseconds = Self.picoseconds(firstDuration) / calls
        let secondPicoseconds = Self.picoseconds(secondDuration) / calls
        benchmark.measurement(firstTime, firstPicoseconds)
        benchmark.measurement(secondTime, secondPicoseconds)
        benchmark.measurement(ratio, firstPicoseconds * 1_000 / max(secondPicoseconds, 1))
    }

    private static func picoseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1_000_000_000_000 + Int(attoseconds / 1_000_000)
    }
}

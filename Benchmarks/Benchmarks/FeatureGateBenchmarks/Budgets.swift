import Benchmark

/// The budgets the harness enforces, and the run settings shared by each kind of benchmark.
///
/// Allocation budgets are checked by `swift package benchmark thresholds check` against the files in
/// `Benchmarks/Thresholds/` (one `FeatureGateBenchmarks.<name>.p90.json` per budgeted benchmark, each saying
/// `"mallocCountTotal": 0`); the tolerance here is zero, so a single malloc in the 90th-percentile sample fails.
/// `Benchmarks/report.py` also checks every sample, and the timing ratios, from the same run.
///
/// To budget a new benchmark for zero allocations: give it ``Benchmark/Configuration/allocationFree(calls:)`` and add
/// its thresholds file.
enum Budget {
    /// No allocation at all: every checked percentile of `mallocCountTotal` must equal the stored threshold, 0.
    static var zeroAllocations: [BenchmarkMetric: BenchmarkThresholds] {
        [.mallocCountTotal: BenchmarkThresholds(absolute: [.p90: 0])]
    }
}

extension Benchmark.Configuration {
    /// A read-side benchmark with a zero-allocation budget. `calls` is how many calls one sample makes; `contended`
    /// adds the toggler's flip count to the metrics.
    static func allocationFree(calls: BenchmarkScalingFactor, contended: Bool = false) -> Self {
        var configuration = reported(calls: calls, contended: contended)
        configuration.thresholds = Budget.zeroAllocations
        return configuration
    }

    /// A benchmark whose time and allocations are reported, not budgeted.
    static func reported(calls: BenchmarkScalingFactor, contended: Bool = false) -> Self {
        Self(
            metrics: [.wallClock, .mallocCountTotal] + (contended ? [ContentionMetric.flips] : []),
            timeUnits: .nanoseconds,
            // Raw counts, never rounded to thousands: "zero" must mean zero.
            units: [.mallocCountTotal: .count, ContentionMetric.flips: .count],
            warmupIterations: 3,
            scalingFactor: calls,
            maxDuration: .seconds(1),
            maxIterations: 2_000
        )
    }
}

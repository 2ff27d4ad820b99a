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
    /// A read-side benchmark with a zero-allocation budget. `calls` is how many calls one sample makes; `extraMetrics`
    /// are custom metrics the benchmark records (raw counts).
    static func allocationFree(calls: BenchmarkScalingFactor, extraMetrics: [BenchmarkMetric] = []) -> Self {
        var configuration = reported(calls: calls, extraMetrics: extraMetrics)
        configuration.thresholds = Budget.zeroAllocations
        return configuration
    }

    /// A benchmark whose time and allocations are reported, not budgeted.
    static func reported(calls: BenchmarkScalingFactor, extraMetrics: [BenchmarkMetric] = []) -> Self {
        let counts = [.mallocCountTotal] + extraMetrics
        return Self(
            metrics: [.wallClock] + counts,
            timeUnits: .nanoseconds,
            // Raw counts, never rounded to thousands: "zero" must mean zero.
            units: Dictionary(uniqueKeysWithValues: counts.map { ($0, BenchmarkUnits.count) }),
            warmupIterations: 3,
            scalingFactor: calls,
            maxDuration: .seconds(1),
            maxIterations: 2_000
        )
    }
}

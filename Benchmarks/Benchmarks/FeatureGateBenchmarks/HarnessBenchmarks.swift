import Benchmark

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The harness's own benchmarks. The canary for the allocation budgets makes exactly one `malloc` per call:
/// `report.py` fails unless every sample counts at least one per call, so a harness that silently stopped counting
/// allocations cannot pass the zero budgets.
func registerHarnessBenchmarks() {
    Benchmark("Harness.mallocCanary", configuration: .reported(calls: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            let allocation = malloc(16)
            blackHole(allocation)
            free(allocation)
        }
    }

    // The floor under async benchmarks: an empty async closure, measured as a whole. The harness runs each sample of
    // an async benchmark in a new Task and calls the closure from it; whatever of that lands in the measured region
    // shows here (it has counted 0 mallocs per sample). `GatedIO.transport.send.closed` marks its own region as well.
    Benchmark("Harness.asyncFloor", configuration: .reported(calls: .one)) { _ async in }
}

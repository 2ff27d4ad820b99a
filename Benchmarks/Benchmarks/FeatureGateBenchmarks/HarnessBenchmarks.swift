import Benchmark

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A canary for the allocation budgets: exactly one `malloc` per call. `report.py` fails unless every sample counts
/// at least one per call, so a harness that silently stopped counting allocations cannot pass the zero budgets.
func registerHarnessBenchmarks() {
    Benchmark("Harness.mallocCanary", configuration: .reported(calls: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            let allocation = malloc(16)
            blackHole(allocation)
            free(allocation)
        }
    }
}

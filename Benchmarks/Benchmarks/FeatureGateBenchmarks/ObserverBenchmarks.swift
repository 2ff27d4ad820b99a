import Benchmark
import FeatureGate

/// Benchmark 5: toggling one feature (a real change each call: enable, then disable, ...) with 0, 1, 10 and 100
/// observers registered with `PrivacyManager.observe`. Each toggle takes the writers' lock, persists the new set to an
/// in-memory store, and calls every observer once, outside the lock. The run fails if an observer missed a change.
///
/// The 0-observer case is the write path to compare with `AirshipStyle.toggle`.
func registerObserverBenchmarks() {
    for observerCount in [0, 1, 10, 100] {
        let manager = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: [.push]),
            store: InMemoryFeatureStore()
        )
        let deliveries = Counter()
        let tokens = (0..<observerCount).map { _ in manager.observe { _ in deliveries.increment() } }
        let name = observerCount == 1 ? "Gate.toggle.1-observer" : "Gate.toggle.\(observerCount)-observers"

        Benchmark(name, configuration: .reported(calls: .kilo)) { benchmark in
            let before = deliveries.value
            var on = manager.isEnabled(.analytics)
            for _ in benchmark.scaledIterations {
                if on { manager.disableFeatures(.analytics) } else { manager.enableFeatures(.analytics) }
                on.toggle()
            }
            if deliveries.value - before != benchmark.scaledIterations.count * observerCount {
                benchmark.error("expected every observer to see every toggle once")
            }
            withExtendedLifetime(tokens) {}
        }
    }
}

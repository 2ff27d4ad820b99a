import Benchmark
import FeatureGate
import Foundation
import NoopRuntime

/// Benchmark 4: what a disabled SDK pays for the I/O it no longer does. With every feature off, a request through
/// `GatedTransport.send` and an event through `GatedEventBuffer.track` are refused at the gate: one atomic load, the
/// refusal counted in the `IOCounter` (two atomic increments: the gate's one flag, and the totals), and a typed
/// `GatedIOError` thrown and caught as such, with `do throws(GatedIOError)`. Neither may allocate. (An SDK that lets the
/// refusal become an `any Error` pays for boxing it: one malloc and about 110 ns per refusal, measured once.)
///
/// The request and the event are built once, outside the measured loop: building them is the SDK's cost, not the
/// gate's (and an SDK can skip it with `admit()`). Each benchmark checks afterwards, outside its measured region,
/// that every call was refused, that the counter counted each refusal, and that nothing was sent or buffered.
///
/// `send` is async and `nonisolated(nonsending)`: called from this nonisolated async closure it runs on the caller's
/// executor, and, being `@inlinable`, its refusal path is inlined here without a suspension. The harness runs each
/// sample of an async closure in a new `Task`; `Harness.asyncFloor` measures what that adds, and this benchmark
/// marks its own region (`startMeasurement` / `stopMeasurement`) around the loop.
func registerGatedIOBenchmarks() {
    let privacy = PrivacyManager(
        configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore())
    let counter = IOCounter()
    let reached = Counter()
    let transport = GatedTransport(
        UnreachableTransport(reached: reached), features: .analytics, privacy: privacy, counter: counter)
    let request = TransportRequest(
        method: "POST", path: "/api/v3/events", headers: ["Content-Type": "application/json"],
        body: Data(#"{"name":"screen_view","screen":"settings"}"#.utf8))

    Benchmark(
        "GatedIO.transport.send.closed",
        configuration: .allocationFree(calls: .kilo),
        closure: { benchmark async in
            let before = counter.totals.transportRefused
            var refused = 0
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                do throws(GatedIOError) {
                    _ = try await transport.send(request)
                } catch {
                    refused &+= error.isRefusal ? 1 : 0
                }
            }
            benchmark.stopMeasurement()
            let calls = benchmark.scaledIterations.count
            if refused != calls || counter.totals.transportRefused - before != calls || reached.value != 0 {
                benchmark.error("expected every request refused at the closed gate, counted, and never sent")
            }
        }
    )

    let buffer = GatedEventBuffer<AnalyticsEvent>(
        features: .analytics, capacity: 100, privacy: privacy, backends: [], counter: counter)
    let event = AnalyticsEvent(name: "screen_view", properties: ["screen": "settings", "source": "deep_link"])

    Benchmark("GatedIO.eventBuffer.track.closed", configuration: .allocationFree(calls: .kilo)) { benchmark in
        let before = counter.totals.eventsRefused
        var refused = 0
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            do throws(GatedIOError) {
                try buffer.track(event)
            } catch {
                refused &+= error.isRefusal ? 1 : 0
            }
        }
        benchmark.stopMeasurement()
        let calls = benchmark.scaledIterations.count
        if refused != calls || counter.totals.eventsRefused - before != calls || buffer.bufferedCount != 0 {
            benchmark.error("expected every event refused at the closed gate, counted, and not buffered")
        }
    }
}

/// The inner client of the gated transport: with the gate closed it must never be called, and if it is, it counts the
/// call so that the benchmark fails.
private struct UnreachableTransport: Transport {
    let reached: Counter

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        reached.increment()
        return .notSent
    }
}

/// A typical analytics event: a name and a few string properties.
private struct AnalyticsEvent: Sendable {
    var name: String
    var properties: [String: String]
}

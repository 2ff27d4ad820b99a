import Benchmark
import Dispatch
import FeatureGate
import Foundation
import NoopRuntime

/// Issue 37: what `GatedEventBuffer.track` costs with the gate open, next to what an SDK would write without the
/// package, in paired samples (``PairedSample``), so that the ratio holds on a busy machine:
///
/// - `lockedAppend`: the floor, a bare locked append: `NSLock`, `Array.append`, unlock. Whatever `track` adds (the
///   gate's load, the revocation check, the counter's counts, the event's identifier) shows against it.
/// - `taskPerEvent`: the pattern the seed's analytics used: an actor that keeps the events, fed by one `Task` per
///   event. A sample spawns its tasks and ends when the actor holds every event.
///
/// Each side handles the same event 1,000 times per sample. The buffer holds 1,000 events, so from the first sample
/// on every `track` also drops the oldest (a ring overwrite), and the locked array is emptied, keeping its capacity,
/// every 1,000 appends: neither side grows. The pair with the locked append has a zero-allocation budget (a `track`
/// allocates nothing, and nor does the floor once its array has its capacity).
func registerEventTrackBenchmarks() {
    let calls = 1_000
    let privacy = PrivacyManager(
        configuration: PrivacyConfiguration(enabledFeatures: .analytics), store: InMemoryFeatureStore())
    let counter = IOCounter()
    let buffer = GatedEventBuffer<TrackedEvent>(
        features: .analytics, capacity: calls, privacy: privacy, backends: [], counter: counter)
    let event = TrackedEvent(name: "screen_view", properties: ["screen": "settings", "source": "deep_link"])

    func trackAll() {
        for _ in 0..<calls {
            do throws(GatedIOError) {
                try buffer.track(event)
            } catch {
                // The gate is open: a refusal fails the benchmark after the sample (the counter's count).
            }
        }
    }

    let floor = LockedArray<TrackedEvent>(capacity: calls)
    let appendPair = PairedSample(first: "track", second: "lockedAppend")
    Benchmark(
        "GatedIO.eventBuffer.track.open-vs-lockedAppend",
        configuration: .allocationFree(calls: .kilo, extraMetrics: appendPair.metrics)
    ) { benchmark in
        let before = counter.totals.eventsAccepted
        appendPair.measure(in: benchmark, calls: calls, trackAll) {
            for _ in 0..<calls { floor.append(event) }
        }
        if counter.totals.eventsAccepted - before != calls || buffer.bufferedCount != calls || floor.count != calls {
            benchmark.error("expected every event kept by the open buffer and by the locked array")
        }
    }

    let sink = TaskPerEventSink<TrackedEvent>()
    let taskPair = PairedSample(first: "track", second: "taskPerEvent")
    Benchmark(
        "GatedIO.eventBuffer.track.open-vs-taskPerEvent",
        configuration: .reported(calls: .kilo, extraMetrics: taskPair.metrics)
    ) { benchmark in
        let before = counter.totals.eventsAccepted
        let received = sink.received
        taskPair.measure(in: benchmark, calls: calls, trackAll) {
            sink.expect(calls)
            for _ in 0..<calls { Task { await sink.record(event) } }
            sink.wait()
        }
        if counter.totals.eventsAccepted - before != calls || sink.received - received != calls {
            benchmark.error("expected every event kept by the open buffer and by the actor")
        }
    }
}

/// A typical analytics event: a name and a few string properties.
struct TrackedEvent: Sendable {
    var name: String
    var properties: [String: String]
}

/// The floor: an array behind an `NSLock`, emptied (keeping its capacity) when it reaches `capacity`.
final class LockedArray<Element>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        elements.reserveCapacity(capacity)
    }

    func append(_ element: Element) {
        lock.lock()
        if elements.count == capacity { elements.removeAll(keepingCapacity: true) }
        elements.append(element)
        lock.unlock()
    }

    var count: Int { lock.withLock { elements.count } }
}

/// The seed's pattern: an actor that keeps every event, fed by a `Task` per event. `wait()` blocks the benchmark's
/// thread (not one of Swift's cooperative threads) until the actor holds as many events as `expect(_:)` announced.
final class TaskPerEventSink<Event: Sendable>: Sendable {
    private actor Store {
        var events: [Event] = []
        var expected = 0
        let done: DispatchSemaphore
        let recorded: Counter

        init(done: DispatchSemaphore, recorded: Counter) {
            self.done = done
            self.recorded = recorded
        }

        func record(_ event: Event) {
            events.append(event)
            recorded.increment()
            if events.count == expected { done.signal() }
        }

        func expect(_ count: Int) {
            events.removeAll(keepingCapacity: true)
            expected = count
        }
    }

    private let done = DispatchSemaphore(value: 0)
    private let recorded = Counter()
    private let store: Store

    init() { store = Store(done: done, recorded: recorded) }

    /// Empties the actor and sets how many events the next `wait()` waits for.
    func expect(_ count: Int) {
        let ready = DispatchSemaphore(value: 0)
        Task {
            await store.expect(count)
            ready.signal()
        }
        ready.wait()
    }

    /// What a tracking call does in the seed: hands the event to a new task that hops onto the actor.
    func record(_ event: Event) async { await store.record(event) }

    /// Blocks until the actor holds every expected event.
    func wait() { done.wait() }

    /// How many events the actor has received in all.
    var received: Int { recorded.value }
}

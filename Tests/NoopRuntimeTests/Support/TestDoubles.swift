import FeatureGate
import Foundation
import NoopRuntime
import Testing

func gate(_ features: Feature = []) -> PrivacyManager {
    PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: features), store: InMemoryFeatureStore())
}

/// The deadline for revocations in tests that check what revoke-all does, not how long it may take (R4 has its
/// own tests, with scripted deadlines): long enough never to pass on a loaded machine, where TSan on two cores
/// can hold a purge back for seconds.
let unhurriedDeadline: Duration = .seconds(120)

/// Collects values from any thread.
final class Collector<Value: Sendable>: Sendable {
    private let values = LockedValue<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
    var count: Int { values.withLock { $0.count } }
}

/// A storage that fails the test the moment anything calls it: for proving that a closed gate touches nothing.
struct ExplodingStorage: Storage {
    func read(_ name: String) throws -> Data? {
        Issue.record("closed gate reached the inner storage: read(\(name))")
        return nil
    }
    func write(_ data: Data, to name: String) throws {
        Issue.record("closed gate reached the inner storage: write(\(name))")
    }
    func remove(_ name: String) throws -> Bool {
        Issue.record("closed gate reached the inner storage: remove(\(name))")
        return false
    }
    func removeAll() throws -> [String] {
        Issue.record("the inner storage was purged")
        return []
    }
}

/// A transport that fails the test the moment anything calls it.
struct ExplodingTransport: Transport {
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        Issue.record("closed gate reached the inner transport: \(request.method) \(request.path)")
        return .notSent
    }
}

/// An event backend that fails the test the moment anything calls it.
struct ExplodingBackend: EventBackend {
    var name: String { "exploding" }
    func deliver(_ events: [Int]) async throws {
        Issue.record("closed gate reached a backend with \(events.count) events")
    }
}

/// A storage in memory that records every call.
final class MemoryStorage: Storage {
    private let files = LockedValue<[String: Data]>([:])
    let calls = Collector<String>()
    func read(_ name: String) throws -> Data? {
        calls.append("read \(name)")
        return files.withLock { $0[name] }
    }
    func write(_ data: Data, to name: String) throws {
        calls.append("write \(name)")
        files.withLock { $0[name] = data }
    }
    func remove(_ name: String) throws -> Bool {
        calls.append("remove \(name)")
        return files.withLock { $0.removeValue(forKey: name) != nil }
    }
    func removeAll() throws -> [String] {
        calls.append("removeAll")
        return files.withLock { files in
            defer { files.removeAll() }
            return files.keys.sorted()
        }
    }
    var names: [String] { files.withLock { $0.keys.sorted() } }
}

struct TransportFailure: Error, CustomStringConvertible {
    var description: String { "collector down" }
}

/// A transport that records every request and answers 200, or fails when told to.
final class RecordingTransport: Transport {
    let requests = Collector<TransportRequest>()
    private let failing = AtomicWord<Bool>(false)
    init(failing: Bool = false) { self.failing.store(failing, ordering: .relaxed) }
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        requests.append(request)
        if failing.load(ordering: .relaxed) { throw TransportFailure() }
        return TransportResponse(statusCode: 200)
    }
    func paths() -> [String] { requests.all.map(\.path) }
}

struct BackendFailure: Error, CustomStringConvertible {
    let attempt: Int
    var description: String { "attempt \(attempt) failed" }
}

/// A backend that fails its first `failures` attempts (or every attempt while `alwaysFail` is set), and records
/// the batches it received.
final class ScriptedBackend: EventBackend {
    let name: String
    let batches = Collector<[Int]>()
    private let attempts = AtomicWord<Int>(0)
    private let failuresLeft: AtomicWord<Int>
    private let alwaysFail: AtomicWord<Bool>
    private let onFailure: (@Sendable () async -> Void)?

    init(_ name: String, failures: Int = 0, alwaysFail: Bool = false, onFailure: (@Sendable () async -> Void)? = nil) {
        self.name = name
        failuresLeft = AtomicWord(failures)
        self.alwaysFail = AtomicWord(alwaysFail)
        self.onFailure = onFailure
    }

    var attemptCount: Int { attempts.load(ordering: .relaxed) }
    var delivered: [Int] { batches.all.flatMap { $0 } }
    func recover() { alwaysFail.store(false, ordering: .relaxed) }

    func deliver(_ events: [Int]) async throws {
        let attempt = attempts.add(1, ordering: .relaxed).newValue
        if alwaysFail.load(ordering: .relaxed)
            || failuresLeft.subtract(1, ordering: .relaxed).oldValue > 0
        {
            await onFailure?()
            throw BackendFailure(attempt: attempt)
        }
        batches.append(events)
    }
}

/// A sleeper that records what it was asked to wait and returns at once.
final class RecordingSleeper: Sendable {
    let delays = Collector<Duration>()
    var sleep: GatedEventBuffer<Int>.Sleeper { { [delays] in delays.append($0) } }
}

/// A one-time signal between tasks.
final class Latch: Sendable {
    private let state = LockedValue<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if isOpen { continuation.resume() }
        }
    }
}

/// Counts calls in progress across every subsystem that shares it.
final class OverlapDetector: Sendable {
    let calls = AtomicWord<Int>(0)
}

/// A subsystem that logs its calls ("analytics.start", …) into a shared log, fails the test if two calls into
/// any subsystem sharing `inFlight` overlap, and can send an opt-out request or fail to start.
final class RecordingSubsystem: Subsystem {
    let name: String
    let requiredFeatures: Feature
    let featureRequirement: FeatureRequirement
    let log: Collector<String>
    let inFlight: OverlapDetector
    let optOutTransport: GatedTransport?
    let failStarts = AtomicWord<Int>(0)
    let beforeStart: (@Sendable () async -> Void)?
    private let storedItems = AtomicWord<Int>(0)

    init(
        _ name: String,
        needs: Feature,
        requirement: FeatureRequirement = .all,
        log: Collector<String>,
        inFlight: OverlapDetector = OverlapDetector(),
        optOutTransport: GatedTransport? = nil,
        beforeStart: (@Sendable () async -> Void)? = nil
    ) {
        self.name = name
        self.requiredFeatures = needs
        self.featureRequirement = requirement
        self.log = log
        self.optOutTransport = optOutTransport
        self.beforeStart = beforeStart
        self.inFlight = inFlight
    }

    private func enter(_ call: String) {
        if inFlight.calls.add(1, ordering: .acquiringAndReleasing).newValue != 1 {
            Issue.record("\(name).\(call) overlapped another call")
        }
        log.append("\(name).\(call)")
    }
    private func leave() { inFlight.calls.subtract(1, ordering: .acquiringAndReleasing) }

    func start() async throws {
        enter("start")
        defer { leave() }
        await beforeStart?()
        if failStarts.load(ordering: .relaxed) > 0 {
            failStarts.subtract(1, ordering: .relaxed)
            throw BackendFailure(attempt: 0)
        }
        storedItems.store(1, ordering: .relaxed)
    }

    func stop(reason: StopReason) async {
        enter("stop")
        defer { leave() }
        if case .featuresDisabled(_, let permit) = reason, let optOutTransport {
            _ = try? await optOutTransport.sendExitRequest(
                TransportRequest(method: "POST", path: "/opt-out/\(name)"),
                permit: permit
            )
            // A second attempt must be refused.
            _ = try? await optOutTransport.sendExitRequest(
                TransportRequest(method: "POST", path: "/opt-out/\(name)"),
                permit: permit
            )
        }
    }

    func purge() async -> PurgeReport {
        enter("purge")
        defer { leave() }
        return PurgeReport(droppedItems: storedItems.exchange(0, ordering: .relaxed), resetIdentifiers: [name])
    }
}

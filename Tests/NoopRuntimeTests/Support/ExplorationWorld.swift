import Dispatch
import FeatureGate
import Foundation
import NoopRuntime
import Testing

/// A small deterministic random number generator (SplitMix64), so a schedule is reproducible from its seed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Every I/O point of the world: storage read/write/remove/removeAll, transport send, the sleeper. Each one is
/// numbered as it is reached; at the one numbered `pauseAt` the flow stops and runs the test's revocation right
/// there, on its own thread, before the I/O goes on (it is then a call already under way). Nothing blocks, so
/// exploration never starves the cooperative thread pool. Faults are injected at random (seeded) when
/// `faultRate` is above zero.
final class IOPoints: Sendable {
    private struct State {
        var count = 0
        var pauseAt: Int?
        var pausedAt: String?
        var names: [String] = []
        var random: SeededGenerator
        var faultRate: Double
        var faults = 0
    }
    private let state: LockedValue<State>
    /// What runs at the pause: `sync` at a storage point, `async` at a transport or sleeper point.
    let onPause = LockedValue<(sync: @Sendable () -> Void, async: @Sendable () async -> Void)?>(nil)

    init(pauseAt: Int?, seed: UInt64 = 0, faultRate: Double = 0) {
        state = LockedValue(State(pauseAt: pauseAt, random: SeededGenerator(seed: seed), faultRate: faultRate))
    }

    /// How many points were reached, and their names in order.
    var reached: (count: Int, names: [String]) { state.withLock { ($0.count, $0.names) } }
    var pausedAt: String? { state.withLock { $0.pausedAt } }
    var faults: Int { state.withLock { $0.faults } }

    /// Counts the point; returns (whether to pause here, whether to fail here).
    private func hit(_ name: String) -> (pause: Bool, fail: Bool) {
        state.withLock { state in
            state.count += 1
            state.names.append(name)
            let pause = state.count == state.pauseAt
            if pause { state.pausedAt = "\(state.count):\(name)" }
            let fail = state.faultRate > 0 && Double.random(in: 0..<1, using: &state.random) < state.faultRate
            if fail { state.faults += 1 }
            return (pause, fail)
        }
    }

    /// A synchronous point (storage). Returns whether to inject a fault.
    func sync(_ name: String) -> Bool {
        let (pause, fail) = hit(name)
        if pause, let action = onPause.withLock({ $0 }) { action.sync() }
        return fail
    }

    /// An asynchronous point (transport, sleeper). Returns whether to inject a fault.
    func async(_ name: String) async -> Bool {
        let (pause, fail) = hit(name)
        if pause, let action = onPause.withLock({ $0 }) { await action.async() }
        return fail
    }
}

struct InjectedFault: Error, CustomStringConvertible {
    let point: String
    var description: String { "injected fault at \(point)" }
}

/// The world's local store: blobs in memory, every call an I/O point.
final class ExploredStorage: Storage {
    let points: IOPoints
    let blobs = LockedValue<[String: Data]>([:])
    init(points: IOPoints) { self.points = points }

    func read(_ name: String) throws -> Data? {
        if points.sync("storage.read") { throw InjectedFault(point: "storage.read") }
        return blobs.withLock { $0[name] }
    }
    func write(_ data: Data, to name: String) throws {
        if points.sync("storage.write \(name)") { throw InjectedFault(point: "storage.write") }
        blobs.withLock { $0[name] = data }
    }
    func remove(_ name: String) throws -> Bool {
        _ = points.sync("storage.remove")
        return blobs.withLock { $0.removeValue(forKey: name) != nil }
    }
    func removeAll() throws -> [String] {
        _ = points.sync("storage.removeAll")
        return blobs.withLock { blobs in
            defer { blobs.removeAll() }
            return blobs.keys.sorted()
        }
    }
    var names: [String] { blobs.withLock { $0.keys.sorted() } }
}

/// The world's network client: every send an I/O point; records what reached it.
final class ExploredTransport: Transport {
    let points: IOPoints
    let requests = Collector<String>()
    /// Event uploads that fail before faults are drawn, so a flush retries.
    let failingUploads = AtomicWord<Int>(0)
    init(points: IOPoints) { self.points = points }
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let fail = await points.async("transport.send \(request.path)")
        requests.append(request.path)
        if request.path == "/events", failingUploads.subtract(1, ordering: .relaxed).oldValue > 0 {
            throw InjectedFault(point: "transport.send (scripted)")
        }
        if fail { throw InjectedFault(point: "transport.send") }
        return TransportResponse(statusCode: 200)
    }
    var optOuts: Int { requests.all.filter { $0 == "/opt-out" }.count }
}

/// Which revocation each event was captured under, and every hand-over to a backend, to check R1.
final class RevocationModel: Sendable {
    private struct State {
        var revocations = 0
        var capturedUnder: [Int: Int] = [:]
        var violations: [String] = []
    }
    private let state = LockedValue(State())

    /// A revocation begins now: the world's observer calls it when the gate closes for analytics.
    func revocationBegins() { state.withLock { $0.revocations += 1 } }
    func captured(_ event: Int) { state.withLock { $0.capturedUnder[event] = $0.revocations } }
    /// A backend received `events`: none may have been captured before a revocation that has begun.
    func handedOver(_ events: [Int], to backend: String) {
        state.withLock { state in
            let stale = events.filter { (state.capturedUnder[$0] ?? .max) < state.revocations }
            if !stale.isEmpty {
                state.violations.append("R1: \(backend) got \(stale) captured before revocation \(state.revocations)")
            }
        }
    }
    var violations: [String] { state.withLock { $0.violations } }
}

/// The backend: appends the batch to a queue blob, then uploads it (two I/O points, or more on retries).
struct ExploredBackend: EventBackend {
    let storage: GatedStorage
    let transport: GatedTransport
    let model: RevocationModel
    var name: String { "queue+upload" }
    func deliver(_ events: [Int]) async throws {
        model.handedOver(events, to: name)
        var queue = try storage.read("queue") ?? Data()
        queue.append(contentsOf: events.map { UInt8(truncatingIfNeeded: $0) })
        try storage.write(queue, to: "queue")
        _ = try await transport.send(TransportRequest(method: "POST", path: "/events"))
        try storage.write(Data(), to: "queue")
    }
}

/// A subsystem built the way the runtime intends: buffer, gated storage and transport, an opt-out on stop.
final class ExploredSubsystem: Subsystem {
    let name = "analytics"
    let requiredFeatures: Feature = .analytics
    let storage: GatedStorage
    let transport: GatedTransport
    let buffer: GatedEventBuffer<Int>

    init(storage: GatedStorage, transport: GatedTransport, buffer: GatedEventBuffer<Int>) {
        self.storage = storage
        self.transport = transport
        self.buffer = buffer
    }

    func start() async throws { try storage.write(Data("session".utf8), to: "session") }
    func stop(reason: StopReason) async {
        guard case .featuresDisabled(_, let permit) = reason else { return }
        _ = try? await transport.sendExitRequest(TransportRequest(method: "POST", path: "/opt-out"), permit: permit)
    }
    func purge() async -> PurgeReport {
        var report = PurgeReport(droppedItems: buffer.purge())
        do { report.removedFiles = try storage.purge() } catch { report.failures.append("\(error)") }
        return report
    }
}

/// One SDK with one analytics subsystem, consent granted, every I/O call a numbered point.
struct ExplorationWorld {
    let points: IOPoints
    let privacy: PrivacyManager
    let consent: ConsentManager
    let runtime: SubsystemRuntime
    let revocation: ConsentRevocation
    let inner: ExploredStorage
    let network: ExploredTransport
    let model = RevocationModel()
    let ledger = IOCounter()
    let subsystem: ExploredSubsystem
    let observation: ObservationToken
    private let nextEvent = LockedValue(0)

    init(points: IOPoints) async throws {
        self.points = points
        privacy = gate(.analytics)
        consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        runtime = SubsystemRuntime(privacy: privacy)
        inner = ExploredStorage(points: points)
        network = ExploredTransport(points: points)
        let storage = GatedStorage(inner, features: .analytics, privacy: privacy, counter: ledger)
        let transport = GatedTransport(network, features: .analytics, privacy: privacy, counter: ledger)
        let buffer = GatedEventBuffer(
            features: .analytics, capacity: 50, privacy: privacy,
            backends: [ExploredBackend(storage: storage, transport: transport, model: model)],
            retryPolicy: RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(1), maxDelay: .milliseconds(4)),
            counter: ledger,
            sleep: { [points] _ in _ = await points.async("sleep") })
        subsystem = ExploredSubsystem(storage: storage, transport: transport, buffer: buffer)
        runtime.register(subsystem)
        observation = privacy.observe { [model] change in
            if change.previous.contains(.analytics) && !change.current.contains(.analytics) { model.revocationBegins() }
        }
        // A deadline that never passes here: exploration checks R1-R3, not R4.
        revocation = ConsentRevocation(
            consent: consent, runtime: runtime, identifier: AnonymousIdentifier(privacy: privacy, url: nil),
            deadline: unhurriedDeadline)
    }

    func track(_ count: Int) {
        for _ in 0..<count {
            let event = nextEvent.withLock { next in
                next += 1
                return next
            }
            model.captured(event)
            _ = try? subsystem.buffer.track(event)
        }
    }

    /// Opt-out requests must match the runtime's disable edges one to one (R3).
    func optOutViolations() -> [String] {
        let edges = runtime.events().filter { event in
            if case .stopped(let disabled) = event.kind { return !disabled.isEmpty }
            return false
        }.count
        var found: [String] = []
        if network.optOuts != edges { found.append("R3: \(network.optOuts) opt-out(s) for \(edges) disable edge(s)") }
        if ledger.totals.exitRequestsSent != network.optOuts {
            found.append("R3: ledger counts \(ledger.totals.exitRequestsSent) exit requests, \(network.optOuts) sent")
        }
        return found
    }
}

import Dispatch
import FeatureGate
import Foundation
import NoopRuntime
import Testing

/// A point where an async flow stops until the test lets it go: `arrived` opens when the flow reaches it.
final class AsyncPause: Sendable {
    let arrived = Latch()
    let released = Latch()
    /// Waits here until released; tells the test it arrived.
    func pause() async {
        arrived.open()
        await released.wait()
    }
}

/// A point where a synchronous flow (a storage call on some thread) blocks until the test lets it go.
final class ThreadPause: Sendable {
    let arrived = Latch()
    private let semaphore = DispatchSemaphore(value: 0)
    func pause() {
        arrived.open()
        semaphore.wait()
    }
    func release() { semaphore.signal() }
}

/// An observer of the gate that, once armed, blocks the thread delivering the next change: register it before
/// any other observer and that change reaches no later one until ``release()``.
final class DeliveryBlocker: Sendable {
    private let pause: ThreadPause
    private let armed: LockedValue<Bool>
    private let token: ObservationToken

    init(_ privacy: PrivacyManager, armed: Bool) {
        let (pause, armed) = (ThreadPause(), LockedValue(armed))
        (self.pause, self.armed) = (pause, armed)
        token = privacy.observe { _ in
            if armed.withLock({ state in
                defer { state = false }
                return state
            }) {
                pause.pause()
            }
        }
    }

    /// Arms the blocker for the next change.
    func arm() { armed.withLock { $0 = true } }
    /// Opens when the delivering thread is blocked.
    var arrived: Latch { pause.arrived }
    /// Lets the delivering thread go on.
    func release() { pause.release() }
    /// Stops observing.
    func cancel() { token.cancel() }
}

/// A storage in memory whose writes block at a ``ThreadPause`` while `pauseWrites` is set.
final class PausingStorage: Storage {
    let files = LockedValue<[String: Data]>([:])
    let writePause = ThreadPause()
    let pauseWrites = AtomicWord<Bool>(false)
    let removeAllCalls = AtomicWord<Int>(0)

    func read(_ name: String) throws -> Data? { files.withLock { $0[name] } }
    func write(_ data: Data, to name: String) throws {
        if pauseWrites.exchange(false, ordering: .acquiringAndReleasing) { writePause.pause() }
        files.withLock { $0[name] = data }
    }
    func remove(_ name: String) throws -> Bool { files.withLock { $0.removeValue(forKey: name) != nil } }
    func removeAll() throws -> [String] {
        removeAllCalls.add(1, ordering: .relaxed)
        return files.withLock { files in
            defer { files.removeAll() }
            return files.keys.sorted()
        }
    }
    var names: [String] { files.withLock { $0.keys.sorted() } }
}

/// A sleeper that pauses the flow at every wait, so a test can act during a backoff.
final class PausingSleeper: Sendable {
    let pause = AsyncPause()
    var sleep: GatedEventBuffer<Int>.Sleeper { { [pause] _ in await pause.pause() } }
}

/// A backend that records what it got and, while `hang` is set, never returns on its own: it waits for
/// `release` (or for its task to be cancelled, if `honoursCancellation`).
final class HangingBackend: EventBackend {
    let name: String
    let batches = Collector<[Int]>()
    let started = Latch()
    let release = Latch()
    init(_ name: String = "hanging") { self.name = name }
    func deliver(_ events: [Int]) async throws {
        started.open()
        await release.wait()
        batches.append(events)
    }
    var delivered: [Int] { batches.all.flatMap { $0 } }
}

/// A transport whose sends wait for `release`, ignoring cancellation: an inner client that hangs.
final class HangingTransport: Transport {
    let started = Latch()
    let release = Latch()
    let requests = Collector<TransportRequest>()
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        started.open()
        await release.wait()
        requests.append(request)
        return TransportResponse(statusCode: 200)
    }
}

/// A subsystem whose data is what its gated storage holds, and whose purge purges that storage.
final class StorageSubsystem: Subsystem {
    let name: String
    let requiredFeatures: Feature
    let storage: GatedStorage
    let log: Collector<String>
    let optOut: GatedTransport?

    init(_ name: String, storage: GatedStorage, log: Collector<String> = Collector(), optOut: GatedTransport? = nil) {
        self.name = name
        self.requiredFeatures = storage.features
        self.storage = storage
        self.log = log
        self.optOut = optOut
    }

    func start() async throws { log.append("\(name).start") }
    func stop(reason: StopReason) async {
        log.append("\(name).stop")
        if case .featuresDisabled(_, let permit) = reason, let optOut {
            _ = try? await optOut.sendExitRequest(TransportRequest(method: "POST", path: "/opt-out"), permit: permit)
        }
    }
    func purge() async -> PurgeReport {
        log.append("\(name).purge")
        do { return PurgeReport(removedFiles: try storage.purge()) } catch {
            return PurgeReport(failures: ["\(error)"])
        }
    }
}

import FeatureGate
import Foundation
import NoopRuntime

/// One analytics event as queued and uploaded: already sanitized and minimized.
struct AnalyticsEvent: Sendable, Encodable {
    let name: String
    let sequence: Int
    let sessionID: String
    /// The install's anonymous identifier; absent only when it could not be stored.
    let anonymousID: String?
    let properties: [String: JSONEventValue]
}

/// Analytics: a gated event buffer that delivers each batch to two backends on their own, an on-disk queue
/// file and an HTTP upload.
///
/// Stopping cancels every flush in flight: a retry waiting in its backoff never runs, and an upload stuck on a
/// slow collector is no longer waited for.
final class AnalyticsSubsystem: Subsystem {
    let name = "analytics"
    let requiredFeatures: Feature = .analytics
    let buffer: GatedEventBuffer<AnalyticsEvent>
    private let storage: GatedStorage
    private let session = LockedValue<(id: String?, sequence: Int)>((nil, 0))
    private let flushes = LockedValue<(next: Int, running: [Int: Task<FlushReport, Never>])>((0, [:]))

    init(storage: GatedStorage, transport: GatedTransport, privacy: PrivacyManager, counter: IOCounter) {
        self.storage = storage
        buffer = GatedEventBuffer(
            features: .analytics,
            capacity: 100,
            privacy: privacy,
            backends: [QueueFileBackend(storage: storage), UploadBackend(transport: transport)],
            retryPolicy: RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(50), maxDelay: .seconds(1)),
            counter: counter
        )
    }

    func start() async throws {
        session.withLock { $0 = (UUID().uuidString.lowercased(), 0) }
    }

    func stop(reason: StopReason) async {
        let running = flushes.withLock { Array($0.running.values) }
        for flush in running { flush.cancel() }
        // Each returns at once once cancelled: the buffer stops waiting for its backends.
        for flush in running { _ = await flush.value }
    }

    /// Flushes the buffer in a task that ``stop(reason:)`` can cancel.
    func flush() async -> FlushReport {
        let task = Task { [buffer] in await buffer.flush() }
        let id = flushes.withLock { flushes in
            flushes.next += 1
            flushes.running[flushes.next] = task
            return flushes.next
        }
        defer { _ = flushes.withLock { $0.running.removeValue(forKey: id) } }
        return await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
    }

    func purge() async -> PurgeReport {
        var report = PurgeReport(droppedItems: buffer.purge())
        do { report.removedFiles = try storage.purge().map { "analytics/" + $0 } } catch {
            report.failures.append("analytics files: \(error)")
        }
        if session.withLock({ $0.id != nil }) {
            session.withLock { $0 = (nil, 0) }
            report.resetIdentifiers = ["sessionID"]
        }
        return report
    }

    /// Counts a refusal through the buffer while analytics is off: nothing is built, kept or stored.
    func refuse() {
        _ = try? buffer.track(AnalyticsEvent(name: "", sequence: 0, sessionID: "", anonymousID: nil, properties: [:]))
    }

    /// Queues a sanitized event; refused (and counted in the ledger) while analytics is off, unless `hold` is
    /// given: then it goes through the hold, which keeps it in memory while analytics consent is undecided.
    func track(_ event: SanitizedEvent, anonymousID: UUID?, hold: ConsentHoldingBuffer<AnalyticsEvent>? = nil) -> Bool {
        guard buffer.isOpen || hold != nil else {
            refuse()
            return false
        }
        let (id, sequence) = session.withLock { session -> (String, Int) in
            session.sequence += 1
            return (session.id ?? "pending", session.sequence)
        }
        let queued = AnalyticsEvent(
            name: event.name,
            sequence: sequence,
            sessionID: id,
            anonymousID: anonymousID.map { $0.uuidString.lowercased() },
            properties: event.properties.mapValues(JSONEventValue.init)
        )
        if let hold { return hold.track(queued).isKept }
        return (try? buffer.track(queued)) != nil
    }
}

/// Appends each batch to `queue.jsonl`, rewritten atomically.
struct QueueFileBackend: EventBackend {
    let storage: GatedStorage
    var name: String { "queue-file" }

    func deliver(_ events: [AnalyticsEvent]) async throws {
        var contents = try storage.read("queue.jsonl") ?? Data()
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for event in events {
            contents.append(try encoder.encode(event))
            contents.append(0x0A)
        }
        try storage.write(contents, to: "queue.jsonl")
    }
}

/// POSTs each batch to `/api/events`, under the batch's `Idempotency-Key`, each event with its `eventID`: the
/// collector can drop what a retry sends twice (delivery is at least once).
struct UploadBackend: EventBackend {
    let transport: GatedTransport
    var name: String { "upload" }

    func deliver(_ events: [AnalyticsEvent]) async throws {
        try await deliver(EventBatch(events: events.map { IdentifiedEvent($0) }))
    }

    func deliver(_ batch: EventBatch<AnalyticsEvent>) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let response = try await transport.send(
            TransportRequest(
                method: "POST", path: "/api/events",
                headers: [ErasureRequest.idempotencyKeyHeader: batch.idempotencyKey.uuidString.lowercased()],
                body: try encoder.encode(batch.events.map(UploadedEvent.init)))
        )
        if let wait = RetryAfterError(response: response) { throw wait }
        guard response.isSuccess else { throw DemoError("upload answered \(response.statusCode)") }
    }
}

/// An event as uploaded: its fields and the identifier the buffer gave it when it was tracked.
private struct UploadedEvent: Encodable {
    let identified: IdentifiedEvent<AnalyticsEvent>

    private enum Key: String, CodingKey { case eventID }

    func encode(to encoder: any Encoder) throws {
        try identified.event.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(identified.id.uuidString.lowercased(), forKey: .eventID)
    }
}

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
final class AnalyticsSubsystem: Subsystem {
    let name = "analytics"
    let requiredFeatures: Feature = .analytics
    let buffer: GatedEventBuffer<AnalyticsEvent>
    private let storage: GatedStorage
    private let session = LockedValue<(id: String?, sequence: Int)>((nil, 0))

    init(storage: GatedStorage, transport: GatedTransport, privacy: PrivacyManager, ledger: IOLedger) {
        self.storage = storage
        buffer = GatedEventBuffer(
            features: .analytics,
            capacity: 100,
            privacy: privacy,
            backends: [QueueFileBackend(storage: storage), UploadBackend(transport: transport)],
            retryPolicy: RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(50), maxDelay: .seconds(1)),
            ledger: ledger
        )
    }

    func start() async throws {
        session.withLock { $0 = (UUID().uuidString.lowercased(), 0) }
    }

    func stop(reason: StopReason) async {}

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

    /// Queues a sanitized event; refused (and counted in the ledger) while analytics is off.
    func track(_ event: SanitizedEvent, anonymousID: UUID?) -> Bool {
        guard buffer.isOpen else {
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

/// POSTs each batch to `/api/events`.
struct UploadBackend: EventBackend {
    let transport: GatedTransport
    var name: String { "upload" }

    func deliver(_ events: [AnalyticsEvent]) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let response = try await transport.send(
            TransportRequest(method: "POST", path: "/api/events", body: try encoder.encode(events))
        )
        guard response.isSuccess else { throw DemoError("upload answered \(response.statusCode)") }
    }
}

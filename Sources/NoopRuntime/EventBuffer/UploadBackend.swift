import FeatureGate
import Foundation

/// An event backend that uploads each batch as one JSON array through a gated transport, in a form a server can
/// deduplicate.
///
/// Each delivery is one `POST` to ``path`` with `Content-Type: application/json` and the batch's
/// ``EventBatch/idempotencyKey`` as `Idempotency-Key` (the same on every retry of an unchanged batch). The body is a
/// JSON array with one object per event, oldest first: `{"id": "<IdentifiedEvent.id>", "event": <the event>}`,
/// the identifier a UUID string (the same in every batch that carries the event), the event encoded by
/// `JSONEncoder` with its default settings. A server drops a batch whose key it has seen, then an event whose
/// identifier it has seen (see <doc:ServersThatFail>).
///
/// A 429 or 503 answer with `Retry-After` throws ``RetryAfterError``, so the buffer sends nothing more to this backend
/// until the wait has passed; any other answer outside 200–299 throws ``UploadRejected``, so the buffer retries the
/// batch (see ``RetryPolicy``). While the transport's gate is closed, delivery throws ``GatedIOError/gateClosed(_:)``
/// and sends nothing.
public struct UploadBackend<Event: Encodable & Sendable>: EventBackend {
    /// `upload`, or the name given.
    public let name: String
    /// Where batches go.
    public let transport: GatedTransport
    /// The request path, relative to the transport's base.
    public let path: String

    /// Uploads batches to `path` through `transport`.
    public init(_ name: String = "upload", transport: GatedTransport, path: String) {
        self.name = name
        self.transport = transport
        self.path = path
    }

    /// Sends `events` as one batch under a new key, each with a new identifier (Foundation's `UUID()`). The buffer
    /// never calls this: it delivers batches.
    public func deliver(_ events: [Event]) async throws {
        try await deliver(EventBatch(events: events.map { IdentifiedEvent($0) }))
    }

    /// Sends `batch` as one JSON array of `{"id", "event"}` objects under its `Idempotency-Key`.
    ///
    /// - Throws: ``RetryAfterError`` on a 429 or 503 with `Retry-After`; ``UploadRejected`` on another answer
    ///   outside 200–299; the transport's error (``GatedIOError`` when the gate is closed); an `EncodingError`.
    public func deliver(_ batch: EventBatch<Event>) async throws {
        let body = try JSONEncoder().encode(batch.events.map { UploadedEvent(id: $0.id.uuidString, event: $0.event) })
        let response = try await transport.send(
            TransportRequest(
                method: "POST", path: path,
                headers: [
                    "Content-Type": "application/json",
                    ErasureRequest.idempotencyKeyHeader: batch.idempotencyKey.uuidString,
                ],
                body: body))
        if let wait = RetryAfterError(response: response) { throw wait }
        guard response.isSuccess else { throw UploadRejected(statusCode: response.statusCode) }
    }
}

/// One element of an upload's body.
private struct UploadedEvent<Event: Encodable>: Encodable {
    let id: String
    let event: Event
}

/// The server answered an upload with a status outside 200–299 (other than a 429 or 503 with `Retry-After`).
public struct UploadRejected: Error, Sendable, Hashable, CustomStringConvertible {
    /// The response's status code.
    public let statusCode: Int

    /// `the server answered 500`.
    public var description: String { "the server answered \(statusCode)" }
}

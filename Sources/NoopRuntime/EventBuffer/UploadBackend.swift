import FeatureGate
import Foundation

/// An event backend that uploads each batch as one JSON array through a gated transport, in a form a server can
/// deduplicate, link to revoke-all's erasure request, and hold to the consent each event was tracked under.
///
/// Each delivery is one `POST` to ``path`` with `Content-Type: application/json` and the batch's
/// ``EventBatch/idempotencyKey`` as `Idempotency-Key`. The body is encoded once per batch
/// (``EventBatch/encodedBody(_:)``): every retry under the key sends the same bytes. It is a JSON array with one
/// object per element, oldest first, its keys sorted:
///
/// - an event: `{"anonymousId": "<UUID>", "consent": {"categoryPreferences": {"analytics": true}}, "event": <the
///   event>, "id": "<UUID>", "userId": "<the SDK's user>"}`;
/// - a consent change: `{"anonymousId": "<UUID>", "consent": {…}, "id": "<UUID>", "type":
///   "consentPreferenceUpdated", "userId": …}`, with no `"event"`.
///
/// `id` is the element's identifier (the same in every batch that carries it); `anonymousId` is
/// ``EventBatch/anonymousId``, the identifier revoke-all's erasure request names; `consent` holds the categories
/// decided when the element was tracked (``ConsentPreferences``) and is left out when none was, never sent as an
/// empty object; `userId` is there only when the SDK set one (``GatedEventBuffer/userId``). The event is encoded
/// by `JSONEncoder` (keys sorted). A server drops a batch whose key it has seen, then an element whose identifier
/// it has seen (see <doc:ServersThatFail>).
///
/// A batch that names no anonymous identifier (its buffer was given none) is not sent: delivery throws
/// ``UploadBackendError/noAnonymousIdentifier``, because a server could not erase what it cannot link to the
/// install. `PrivacyStack.eventBuffer` gives its buffers the stack's identifier.
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

    /// Always throws ``UploadBackendError/noAnonymousIdentifier``: events handed over without their batch name no
    /// install, so nothing is sent. The buffer never calls this: it delivers batches.
    public func deliver(_ events: [Event]) async throws {
        try await deliver(EventBatch(events: events.map { IdentifiedEvent($0) }))
    }

    /// Sends `batch` as one JSON array of elements (see the type's description) under its `Idempotency-Key`, the
    /// body encoded on the first attempt and the same bytes on every retry.
    ///
    /// - Throws: ``UploadBackendError/noAnonymousIdentifier`` when the batch names no install (nothing sent);
    ///   ``RetryAfterError`` on a 429 or 503 with `Retry-After`; ``UploadRejected`` on another answer outside
    ///   200–299; the transport's error (``GatedIOError`` when the gate is closed); an `EncodingError`.
    public func deliver(_ batch: EventBatch<Event>) async throws {
        guard let anonymousId = batch.anonymousId else { throw UploadBackendError.noAnonymousIdentifier }
        let body = try batch.encodedBody {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return try encoder.encode(
                batch.elements.map { UploadedElement(element: $0, anonymousId: anonymousId.uuidString) })
        }
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

/// One element of an upload's body, in the wire format the type's description gives.
private struct UploadedElement<Event: Encodable & Sendable>: Encodable {
    let element: EventBatch<Event>.Element
    let anonymousId: String

    private enum Key: String, CodingKey {
        case id, anonymousId, userId, event, type, consent
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        let consent: ConsentPreferences
        let userId: String?
        switch element {
        case .event(let event):
            try container.encode(event.id.uuidString, forKey: .id)
            try container.encode(event.event, forKey: .event)
            (consent, userId) = (event.consent, event.userId)
        case .consentPreferenceUpdated(let update):
            try container.encode(update.id.uuidString, forKey: .id)
            try container.encode("consentPreferenceUpdated", forKey: .type)
            (consent, userId) = (update.consent, update.userId)
        }
        try container.encode(anonymousId, forKey: .anonymousId)
        try container.encodeIfPresent(userId, forKey: .userId)
        // Left out when nothing is decided: an empty object reads as "everything denied" to some servers.
        if !consent.isEmpty { try container.encode(consent.wireValue, forKey: .consent) }
    }
}

/// Why ``UploadBackend`` sent nothing.
public enum UploadBackendError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The batch names no anonymous identifier (its ``GatedEventBuffer`` was given no `AnonymousIdentifier`): a
    /// server could not link what it receives to revoke-all's erasure request, so nothing was sent.
    case noAnonymousIdentifier

    /// What to do about it.
    public var description: String {
        switch self {
        case .noAnonymousIdentifier:
            "not sent: the batch names no anonymous identifier (give the event buffer the install's "
                + "AnonymousIdentifier, as PrivacyStack.eventBuffer does), so the server could not erase it"
        }
    }
}

/// The server answered an upload with a status outside 200–299 (other than a 429 or 503 with `Retry-After`).
public struct UploadRejected: Error, Sendable, Hashable, CustomStringConvertible {
    /// The response's status code.
    public let statusCode: Int

    /// `the server answered 500`.
    public var description: String { "the server answered \(statusCode)" }
}

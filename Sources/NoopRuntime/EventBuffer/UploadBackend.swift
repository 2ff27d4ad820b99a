import FeatureGate
import Foundation

/// An event backend that uploads each batch as one JSON array through a gated transport.
///
/// Each delivery is one `POST` to ``path`` with `Content-Type: application/json`; a response outside 200–299 is an
/// error, so the buffer retries the batch (see ``RetryPolicy``). While the transport's gate is closed, delivery
/// throws ``GatedIOError/gateClosed(_:)`` and sends nothing.
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

    /// Sends `events` as one JSON array; throws on a transport error or a response outside 200–299.
    public func deliver(_ events: [Event]) async throws {
        let body = try JSONEncoder().encode(events)
        let response = try await transport.send(
            TransportRequest(
                method: "POST", path: path, headers: ["Content-Type": "application/json"], body: body))
        guard response.isSuccess else { throw UploadRejected(statusCode: response.statusCode) }
    }
}

/// The server answered an upload with a status outside 200–299.
public struct UploadRejected: Error, Sendable, Hashable, CustomStringConvertible {
    /// The response's status code.
    public let statusCode: Int

    /// `the server answered 503`.
    public var description: String { "the server answered \(statusCode)" }
}

import Foundation

/// The role of an SDK's network client: one request in, one response out.
///
/// Implement it over your real HTTP client, then hand it to ``GatedTransport`` so that no request leaves while
/// the feature is off. Implementations must be safe to call from any thread.
public protocol Transport: Sendable {
    /// Sends `request` and returns the response; throws when nothing usable came back.
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

/// A request: method, path, headers and body. Transport-neutral; an HTTP transport maps it one to one.
public struct TransportRequest: Sendable, Hashable {
    /// The method, such as `"POST"`.
    public var method: String
    /// The path (and query), such as `"/api/events"`.
    public var path: String
    /// Header fields, in order.
    public var headers: [String: String]
    /// The body; empty for none.
    public var body: Data

    /// Creates a request.
    public init(method: String, path: String, headers: [String: String] = [:], body: Data = Data()) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }
}

/// A response: a status code, header fields and a body.
public struct TransportResponse: Sendable, Hashable {
    /// The status code; `0` means nothing was sent (see ``NoopTransport``).
    public var statusCode: Int
    /// Header fields (such as `ETag` and `Last-Modified` for a conditional request); see ``header(_:)``.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// Creates a response.
    public init(statusCode: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
    }

    /// The value of the header field `name`, matched case-insensitively, as HTTP field names are.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Whether the status code is 2xx.
    public var isSuccess: Bool { (200..<300).contains(statusCode) }

    /// What ``NoopTransport`` answers: status 0, no body.
    public static let notSent = TransportResponse(statusCode: 0)
}

/// A transport that sends nothing: every request is dropped and answered with ``TransportResponse/notSent``.
///
/// Use it in place of a real client while a subsystem's feature is off. It never does I/O and never throws.
public struct NoopTransport: Transport {
    /// Creates the stand-in.
    public init() {}

    /// Drops `request`; returns ``TransportResponse/notSent``.
    @inlinable
    public func send(_ request: TransportRequest) async throws -> TransportResponse { .notSent }
}

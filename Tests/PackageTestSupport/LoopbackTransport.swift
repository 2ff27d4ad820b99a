import Foundation
import NoopRuntime

/// A transport to a ``LoopbackHTTPServer``: real HTTP over a loopback socket, its blocking calls on a thread of
/// their own.
public struct LoopbackTransport: Transport {
    /// The server every request goes to.
    public let server: LoopbackHTTPServer

    /// A transport to `server`.
    public init(server: LoopbackHTTPServer) {
        self.server = server
    }

    /// Sends `request` to the server and waits for its whole response.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let response = try await LoopbackHTTPClient.send(
            port: server.port, method: request.method, path: request.path, headers: request.headers,
            body: request.body)
        return TransportResponse(statusCode: response.status, headers: response.headers, body: response.body)
    }
}

import Foundation
import NoopRuntime
import PackageTestSupport

/// A transport to a ``LoopbackHTTPServer``: real HTTP over a loopback socket, its blocking calls on a thread of
/// their own.
struct LoopbackTransport: Transport {
    let server: LoopbackHTTPServer

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let response = try await LoopbackHTTPClient.send(
            port: server.port, method: request.method, path: request.path, headers: request.headers,
            body: request.body)
        return TransportResponse(statusCode: response.status, headers: response.headers, body: response.body)
    }
}

import Foundation
import NoopRuntime

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The demo SDK's real HTTP client: HTTP/1.1 over a POSIX socket to the loopback collector.
///
/// No URLSession: on Linux it pulls in libcurl, whose own start-up would blur the syscall trace (an app uses
/// NoopRuntime's `URLSessionTransport`). The collector is started on the first request, which only a request that
/// passed the gate can make. The socket calls block, so they run on a thread of their own, never on Swift's
/// cooperative threads: a collector that holds the connection stalls only that thread, and the caller (a flush, a
/// revocation) stops waiting at its deadline or when cancelled.
struct LoopbackHTTPTransport: Transport {
    let collector: LoopbackCollector

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { [collector] in
                continuation.resume(with: Result { try Self.exchange(request, collector) })
            }
            thread.name = "loopback-http-client"
            thread.start()
        }
    }

    /// One request and its response, with blocking socket calls: only ever on the thread `send` starts.
    static func exchange(_ request: TransportRequest, _ collector: LoopbackCollector) throws -> TransportResponse {
        let port = try collector.port()
        let fd = socket(AF_INET, Sockets.stream, 0)
        guard fd >= 0 else { throw SocketError(call: "socket", code: errno) }
        defer { close(fd) }
        Sockets.ignoreSIGPIPE(fd)
        var address = Sockets.loopback(port: port)
        guard Sockets.withAddress(&address, { connect(fd, $0, $1) }) == 0 else {
            throw SocketError(call: "connect", code: errno)
        }
        var head = "\(request.method) \(request.path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(request.body.count)\r\nConnection: close\r\n\r\n"
        try Sockets.writeAll(fd, Array(head.utf8) + Array(request.body))

        var data: [UInt8] = []
        while try Sockets.readChunk(fd, into: &data) > 0 {}
        guard let headEnd = Sockets.headEnd(in: data) else { throw SocketError(call: "read", code: EPROTO) }
        let lines = String(decoding: data[0..<headEnd], as: UTF8.self).split(separator: "\r\n")
        let parts = (lines.first ?? "").split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw SocketError(call: "read", code: EPROTO) }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            let field = line.split(separator: ":", maxSplits: 1)
            if field.count == 2 { headers[String(field[0])] = String(field[1].drop { $0 == " " }) }
        }
        return TransportResponse(statusCode: status, headers: headers, body: Data(data[(headEnd + 4)...]))
    }
}

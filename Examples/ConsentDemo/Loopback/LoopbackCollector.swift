import FeatureGate
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A minimal HTTP responder on 127.0.0.1 that records every request it receives.
///
/// It opens its socket lazily, on the first call to `port()`, which the demo's transport makes only when a
/// request has passed the gate: a run with every feature off never opens a socket at all.
final class LoopbackCollector: Sendable {
    /// One request as received.
    struct Request: Sendable {
        let method: String
        let path: String
        let body: [UInt8]

        /// `POST /api/events (5 events)`.
        var summary: String {
            let text = String(decoding: body, as: UTF8.self)
            if path == "/api/events", let events = try? JSONSerialization.jsonObject(with: Data(body)) as? [Any] {
                return "\(method) \(path) (\(events.count) event\(events.count == 1 ? "" : "s"))"
            }
            return body.isEmpty ? "\(method) \(path)" : "\(method) \(path) \(text.prefix(60))"
        }
    }

    private struct State {
        var port: UInt16?
        var requests: [Request] = []
    }

    private let state = LockedValue(State())

    /// Whether the listening socket was ever opened.
    var isRunning: Bool { state.withLock { $0.port != nil } }

    /// Every request received so far, in order.
    var requests: [Request] { state.withLock { $0.requests } }

    /// The port it listens on, opening the socket and starting the accept thread on the first call.
    func port() throws -> UInt16 {
        try state.withLock { state in
            if let port = state.port { return port }
            let listener = socket(AF_INET, Sockets.stream, 0)
            guard listener >= 0 else { throw SocketError(call: "socket", code: errno) }
            var yes: Int32 = 1
            setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
            var address = Sockets.loopback(port: 0)
            guard Sockets.withAddress(&address, { bind(listener, $0, $1) }) == 0 else {
                defer { close(listener) }
                throw SocketError(call: "bind", code: errno)
            }
            guard listen(listener, 16) == 0 else {
                defer { close(listener) }
                throw SocketError(call: "listen", code: errno)
            }
            var bound = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &bound) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
            }
            let port = UInt16(bigEndian: bound.sin_port)
            let thread = Thread { [self] in serve(listener) }
            thread.name = "loopback-collector"
            thread.start()
            state.port = port
            return port
        }
    }

    private func serve(_ listener: Int32) {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            handle(client)
            close(client)
        }
    }

    private func handle(_ fd: Int32) {
        var data: [UInt8] = []
        do {
            var headEnd = Sockets.headEnd(in: data)
            while headEnd == nil {
                guard try Sockets.readChunk(fd, into: &data) > 0 else { return }
                headEnd = Sockets.headEnd(in: data)
            }
            guard let headEnd else { return }
            let head = String(decoding: data[0..<headEnd], as: UTF8.self).split(separator: "\r\n")
            let requestLine = head.first?.split(separator: " ") ?? []
            guard requestLine.count >= 2 else { return }
            var length = 0
            for line in head.dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == "content-length" {
                    length = Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
            while data.count < headEnd + 4 + length {
                guard try Sockets.readChunk(fd, into: &data) > 0 else { break }
            }
            let bodyEnd = min(data.count, headEnd + 4 + length)
            let request = Request(
                method: String(requestLine[0]),
                path: String(requestLine[1]),
                body: Array(data[(headEnd + 4)..<bodyEnd])
            )
            state.withLock { $0.requests.append(request) }
            let body =
                request.path == "/api/inbox" ? #"{"messages":[{"id":"welcome","title":"Welcome!"}]}"# : #"{"ok":true}"#
            let response =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Connection: close\r\n\r\n" + body
            try Sockets.writeAll(fd, Array(response.utf8))
        } catch {
            return
        }
    }
}

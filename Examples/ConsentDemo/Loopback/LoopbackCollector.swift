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
///
/// When slow (`--slow-collector MS`), it serves each connection on a thread of its own and holds every
/// `/api/events` response for `slowEvents`, then answers 503, so an upload waits and then retries: a revocation
/// can land while a flush waits on it. It counts the events received after ``markRevocationBegan()``.
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

    /// Where the demo's refresher asks for remote data.
    static let remoteDataPath = "/api/remote-data/app/demo/ios"

    /// The first remote-data answer: Airship's response format, disabling push for app versions 1.0.x on iOS.
    static let remoteDataDisablingPush = #"""
        {"ok":true,"payloads":[{"type":"app_config:ios","timestamp":"2026-11-25T09:00:00.000","data":{
        "disable_features":[{"modules":["push"],"sdk_versions":["[17.0,18.0["],
        "app_versions":{"scope":["ios","version"],"value":{"version_matches":"1.0.+"}}}]}}]}
        """#
    /// Every later answer: the rule is gone.
    static let remoteDataLifted =
        #"{"ok":true,"payloads":[{"type":"app_config:ios","timestamp":"2026-11-25T10:00:00.000","data":{}}]}"#

    private struct State {
        var port: UInt16?
        var remoteDataServed = 0
        var requests: [Request] = []
        var revocationMark: Int?
    }

    private let state = LockedValue(State())
    /// How long each `/api/events` response is held (answered 503 afterwards); `nil` for a prompt collector.
    let slowEvents: Duration?

    init(slowEvents: Duration? = nil) {
        self.slowEvents = slowEvents
    }

    /// Notes that a revocation begins now; later requests count in ``eventCounts``' `afterRevocation`.
    func markRevocationBegan() {
        state.withLock { $0.revocationMark = $0.requests.count }
    }

    /// Events received in `/api/events` requests before and after ``markRevocationBegan()`` (all before when it
    /// was not called).
    var eventCounts: (beforeRevocation: Int, afterRevocation: Int) {
        state.withLock { state in
            let mark = state.revocationMark ?? state.requests.count
            func events(_ requests: ArraySlice<Request>) -> Int {
                requests.filter { $0.path == "/api/events" }.reduce(0) { total, request in
                    let batch = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [Any]
                    return total + (batch?.count ?? 0)
                }
            }
            return (events(state.requests[..<mark]), events(state.requests[mark...]))
        }
    }

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
            Sockets.ignoreSIGPIPE(client)
            if slowEvents == nil {
                handle(client)
                close(client)
            } else {
                let thread = Thread { [self] in
                    handle(client)
                    close(client)
                }
                thread.start()
            }
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
            if let slowEvents, request.path == "/api/events" {
                let (seconds, attoseconds) = slowEvents.components
                Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
                let busy = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                try Sockets.writeAll(fd, Array(busy.utf8))
                return
            }
            var body =
                request.path == "/api/inbox" ? #"{"messages":[{"id":"welcome","title":"Welcome!"}]}"# : #"{"ok":true}"#
            var extraHeaders = ""
            if request.path == Self.remoteDataPath {
                let served = state.withLock { state in
                    state.remoteDataServed += 1
                    return state.remoteDataServed
                }
                body = served == 1 ? Self.remoteDataDisablingPush : Self.remoteDataLifted
                extraHeaders = "ETag: \"\(min(served, 2))\"\r\n"
            }
            let response =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                + extraHeaders + "Connection: close\r\n\r\n" + body
            try Sockets.writeAll(fd, Array(response.utf8))
        } catch {
            return
        }
    }
}

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a ``LoopbackHTTPServer`` does with one request: a scripted answer or a scripted fault.
public enum LoopbackReply: Sendable {
    /// Answers with this status, these header fields and this body (`Content-Length` and `Connection: close` added).
    case respond(status: Int, headers: [String: String] = [:], body: Data = Data())
    /// Closes the connection without answering (after reading the whole request): a reset before the response.
    case closeWithoutAnswer
    /// Sends the response head and half the body, then closes: the server did the work, the answer is lost.
    case cutMidResponse(status: Int, body: Data)
    /// Holds the connection open and never answers, until the server stops.
    case neverAnswer

    /// `200` with `body`.
    public static func ok(_ body: String = "", headers: [String: String] = [:]) -> LoopbackReply {
        .respond(status: 200, headers: headers, body: Data(body.utf8))
    }
}

/// An HTTP/1.1 server on 127.0.0.1 (an ephemeral port) that answers each request as its script says, and records
/// every request it received. For fault tests: errors, `Retry-After`, redirects, resets, lost responses, hangs.
///
/// Each connection is served on a thread of its own and closed after one answer. Nothing listens on any other
/// address. Call ``stop()`` when done: it closes the listener and ends every held connection.
public final class LoopbackHTTPServer: @unchecked Sendable {
    /// One request as received.
    public struct Request: Sendable {
        /// Its position among every request the server received, from 0.
        public var index: Int
        /// The method.
        public var method: String
        /// The path and query.
        public var path: String
        /// Header fields, names lowercased.
        public var headers: [String: String]
        /// The body.
        public var body: Data

        /// The value of the header field `name` (any case).
        public func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    /// The port it listens on.
    public let port: UInt16
    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private let listener: Int32
    private let script: @Sendable (Request) -> LoopbackReply
    private let lock = NSLock()
    private var received: [Request] = []
    private var held: [Int32] = []
    private var isStopped = false

    /// Opens the listening socket on 127.0.0.1 and starts accepting; `script` answers each request.
    public init(script: @escaping @Sendable (Request) -> LoopbackReply) throws {
        self.script = script
        let fd = socket(AF_INET, LoopbackSocket.stream, 0)
        guard fd >= 0 else { throw LoopbackSocketError(call: "socket", code: errno) }
        LoopbackSocket.closeOnExec(fd)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = LoopbackSocket.address(port: 0)
        guard LoopbackSocket.withAddress(&address, { bind(fd, $0, $1) }) == 0, listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw LoopbackSocketError(call: "bind", code: code)
        }
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: bound.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "loopback-http-server"
        thread.start()
    }

    /// A server that answers the `n`th request (from 0) with `replies[n]`, and every later one with `then`.
    public convenience init(replies: [LoopbackReply], then: LoopbackReply = .ok()) throws {
        try self.init { request in request.index < replies.count ? replies[request.index] : then }
    }

    deinit { stop() }

    /// Every request received so far, in order of arrival.
    public var requests: [Request] { lock.withLock { received } }

    /// Stops listening and ends every connection held open. Idempotent.
    ///
    /// It only shuts sockets down; the threads that own them close them, so no descriptor is closed while another
    /// thread may still use its number (which a new socket elsewhere in the process could have taken).
    public func stop() {
        lock.withLock {
            if isStopped { return }
            isStopped = true
            shutdown(listener, Int32(SHUT_RDWR))
            for fd in held { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private func acceptLoop() {
        defer { close(listener) }
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            LoopbackSocket.closeOnExec(client)
            LoopbackSocket.ignoreSIGPIPE(client)
            if lock.withLock({ isStopped }) {
                close(client)
                return
            }
            let thread = Thread { [self] in
                serve(client)
                close(client)
            }
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        var data: [UInt8] = []
        var headEnd = LoopbackSocket.headEnd(in: data)
        while headEnd == nil {
            guard LoopbackSocket.readChunk(fd, into: &data) > 0 else { return }
            headEnd = LoopbackSocket.headEnd(in: data)
        }
        guard let headEnd else { return }
        let lines = String(decoding: data[0..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = (lines.first ?? "").split(separator: " ")
        guard requestLine.count >= 2 else { return }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            let field = line.split(separator: ":", maxSplits: 1)
            if field.count == 2 {
                headers[field[0].lowercased()] = field[1].trimmingCharacters(in: .whitespaces)
            }
        }
        let length = Int(headers["content-length"] ?? "") ?? 0
        while data.count < headEnd + 4 + length {
            guard LoopbackSocket.readChunk(fd, into: &data) > 0 else { break }
        }
        let bodyEnd = min(data.count, headEnd + 4 + length)
        let request: Request = lock.withLock {
            let request = Request(
                index: received.count, method: String(requestLine[0]), path: String(requestLine[1]),
                headers: headers, body: Data(data[(headEnd + 4)..<bodyEnd]))
            received.append(request)
            return request
        }
        switch script(request) {
        case .respond(let status, let fields, let body):
            LoopbackSocket.writeAll(fd, Self.head(status: status, fields: fields, length: body.count) + Array(body))
        case .closeWithoutAnswer:
            return
        case .cutMidResponse(let status, let body):
            let half = Array(body.prefix(body.count / 2))
            LoopbackSocket.writeAll(fd, Self.head(status: status, fields: [:], length: body.count) + half)
        case .neverAnswer:
            let stopped = lock.withLock {
                if !isStopped { held.append(fd) }
                return isStopped
            }
            if stopped { return }
            // Until stop() shuts the connection down (a read then returns 0), or 10 minutes at most.
            var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            for _ in 0..<600 where poll(&pollFD, 1, 1000) == 0 {}
            lock.withLock { held.removeAll { $0 == fd } }
        }
    }

    private static func head(status: Int, fields: [String: String], length: Int) -> [UInt8] {
        var head = "HTTP/1.1 \(status) Scripted\r\n"
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(length)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8)
    }
}

/// A blocking HTTP/1.1 client for the loopback server, for test transports: runs its socket calls on a thread of
/// its own (never on Swift's concurrency threads) and resumes the caller when done.
public enum LoopbackHTTPClient {
    /// The response to one request: status, header fields (as sent) and body.
    public struct Response: Sendable {
        /// The status code.
        public var status: Int
        /// Header fields, as the server spelled them.
        public var headers: [String: String]
        /// The body.
        public var body: Data
    }

    /// Sends one request to 127.0.0.1:`port` and reads the whole response; throws on a connection closed before a
    /// complete response, or after `timeout` seconds without data.
    public static func send(
        port: UInt16, method: String, path: String, headers: [String: String] = [:], body: Data = Data(),
        timeout: Int = 30
    ) async throws -> Response {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(
                    with: Result {
                        try exchange(port: port, method: method, path: path, headers: headers, body: body, timeout)
                    })
            }
            thread.start()
        }
    }

    private static func exchange(
        port: UInt16, method: String, path: String, headers: [String: String], body: Data, _ timeout: Int
    ) throws -> Response {
        let fd = socket(AF_INET, LoopbackSocket.stream, 0)
        guard fd >= 0 else { throw LoopbackSocketError(call: "socket", code: errno) }
        LoopbackSocket.closeOnExec(fd)
        defer { close(fd) }
        LoopbackSocket.ignoreSIGPIPE(fd)
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = LoopbackSocket.address(port: port)
        guard LoopbackSocket.withAddress(&address, { connect(fd, $0, $1) }) == 0 else {
            throw LoopbackSocketError(call: "connect", code: errno)
        }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        LoopbackSocket.writeAll(fd, Array(head.utf8) + Array(body))
        var data: [UInt8] = []
        while true {
            let count = LoopbackSocket.readChunk(fd, into: &data)
            if count < 0 { throw LoopbackSocketError(call: "read", code: errno) }
            if count == 0 { break }
        }
        guard let headEnd = LoopbackSocket.headEnd(in: data) else {
            throw LoopbackSocketError(call: "read", code: ECONNRESET)
        }
        let lines = String(decoding: data[0..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        let parts = (lines.first ?? "").split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else {
            throw LoopbackSocketError(call: "read", code: EPROTO)
        }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            let field = line.split(separator: ":", maxSplits: 1)
            if field.count == 2 { fields[String(field[0])] = field[1].trimmingCharacters(in: .whitespaces) }
        }
        let body = Data(data[(headEnd + 4)...])
        if let length = fields.first(where: { $0.key.lowercased() == "content-length" }).flatMap({ Int($0.value) }),
            body.count < length
        {
            throw LoopbackSocketError(call: "read", code: ECONNRESET)
        }
        return Response(status: status, headers: fields, body: body)
    }
}

/// A socket call that failed, with the call's name and `errno`.
public struct LoopbackSocketError: Error, CustomStringConvertible {
    /// The call.
    public let call: String
    /// `errno`.
    public let code: Int32
    /// `read failed: Connection reset by peer`.
    public var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
}

enum LoopbackSocket {
    /// Keeps `fd` out of child processes: a child another test starts would otherwise keep a connection (or the
    /// listener) open for as long as it lives, and a client waiting for the end of a response would wait with it.
    static func closeOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }

    #if canImport(Glibc) || canImport(Musl)
    static let stream = Int32(SOCK_STREAM.rawValue)
    #else
    static let stream: Int32 = SOCK_STREAM
    #endif

    static func address(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }

    static func withAddress<R>(
        _ address: inout sockaddr_in, _ body: (UnsafeMutablePointer<sockaddr>, socklen_t) -> R
    ) -> R {
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    #if canImport(Glibc) || canImport(Musl)
    /// A peer that closed early makes `send` fail with `EPIPE`, not raise `SIGPIPE` (which would end the test
    /// process).
    static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
    /// Darwin's `send` has no `MSG_NOSIGNAL`: ``ignoreSIGPIPE(_:)`` sets the socket option instead.
    static let sendFlags: Int32 = 0
    #endif

    /// Makes a write to `fd` after the peer closed fail with `EPIPE` instead of raising `SIGPIPE`: `SO_NOSIGPIPE` on
    /// Darwin; on Linux ``sendFlags`` does it per call. Called on every socket the server or client writes to.
    static func ignoreSIGPIPE(_ fd: Int32) {
        #if canImport(Darwin)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + offset, raw.count - offset, sendFlags)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }

    /// Reads one chunk into `data`: the bytes read, 0 at end of stream, -1 on an error.
    static func readChunk(_ fd: Int32, into data: inout [UInt8]) -> Int {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count > 0 { data.append(contentsOf: buffer[0..<count]) }
            return count
        }
    }

    static func headEnd(in data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        for index in 0...(data.count - 4)
        where data[index] == 13 && data[index + 1] == 10 && data[index + 2] == 13 && data[index + 3] == 10 {
            return index
        }
        return nil
    }
}

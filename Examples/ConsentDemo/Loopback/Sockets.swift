#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A socket call that failed, with the call's name and `errno`.
struct SocketError: Error, CustomStringConvertible {
    let call: String
    let code: Int32
    var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
}

/// Thin wrappers over the POSIX socket calls the loopback collector and client need, IPv4 loopback only.
enum Sockets {
    #if canImport(Glibc) || canImport(Musl)
    static let stream = Int32(SOCK_STREAM.rawValue)
    #else
    static let stream = SOCK_STREAM
    #endif

    static func loopback(port: UInt16) -> sockaddr_in {
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
    /// A peer that closed early makes `send` fail with `EPIPE`, not raise `SIGPIPE` (which would end the demo).
    static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
    /// Darwin's `send` has no `MSG_NOSIGNAL`: ``ignoreSIGPIPE(_:)`` sets the socket option instead.
    static let sendFlags: Int32 = 0
    #endif

    /// Makes a write to `fd` after the peer closed fail with `EPIPE` instead of raising `SIGPIPE`: `SO_NOSIGPIPE` on
    /// Darwin; on Linux ``sendFlags`` does it per call. Called on every socket the demo writes to.
    static func ignoreSIGPIPE(_ fd: Int32) {
        #if canImport(Darwin)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Writes all of `bytes`, retrying short writes and interrupts; a closed peer is an error, never a signal.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + offset, raw.count - offset, sendFlags)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw SocketError(call: "send", code: errno)
            }
            offset += written
        }
    }

    /// Reads one chunk into `data`; returns the number of bytes read, 0 at end of stream.
    static func readChunk(_ fd: Int32, into data: inout [UInt8]) throws -> Int {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw SocketError(call: "read", code: errno)
            }
            data.append(contentsOf: buffer[0..<count])
            return count
        }
    }

    /// Where the blank line that ends the HTTP head starts, if it has arrived.
    static func headEnd(in data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        for index in 0...(data.count - 4)
        where data[index] == 13 && data[index + 1] == 10 && data[index + 2] == 13 && data[index + 3] == 10 {
            return index
        }
        return nil
    }
}

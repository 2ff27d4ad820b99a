import FeatureGate
import Foundation
import NoopRuntime
import PackageTestSupport
import Testing

/// The library's own URLSession transport against loopback servers: round trips, redirects, origins, hangs.
@Suite struct URLSessionTransportTests {
    @Test func aRequestRoundTripsMethodPathHeadersAndBody() async throws {
        let server = try LoopbackHTTPServer { request in
            .respond(status: 201, headers: ["ETag": "\"v1\""], body: Data("got \(request.body.count)".utf8))
        }
        defer { server.stop() }
        let transport = URLSessionTransport(baseURL: server.baseURL)
        let response = try await transport.send(
            TransportRequest(
                method: "POST", path: "/api/events?x=1", headers: ["X-Test": "yes"], body: Data("12345".utf8)))
        #expect(response.statusCode == 201)
        #expect(response.header("etag") == "\"v1\"")
        #expect(response.body == Data("got 5".utf8))
        let request = try #require(server.requests.first)
        #expect(request.method == "POST" && request.path == "/api/events?x=1")
        #expect(request.header("X-Test") == "yes" && request.body == Data("12345".utf8))
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func aRedirectToAnotherOriginIsNotFollowedAndCarriesNothingThere(status: Int) async throws {
        let elsewhere = try LoopbackHTTPServer { _ in .ok(#"{"disabled_features":["all"]}"#) }
        defer { elsewhere.stop() }
        let server = try LoopbackHTTPServer { _ in
            .respond(status: status, headers: ["Location": "\(elsewhere.baseURL.absoluteString)/payload"])
        }
        defer { server.stop() }
        let transport = URLSessionTransport(baseURL: server.baseURL)
        let response = try await transport.send(
            TransportRequest(method: "GET", path: "/api/remote-data", headers: ["If-None-Match": "\"v1\""]))
        #expect(response.statusCode == status)
        #expect(server.requests.count == 1)
        #expect(elsewhere.requests.isEmpty)
    }

    @Test func aRedirectWithinTheOriginIsFollowedExceptForARequestWithAnIdempotencyKey() async throws {
        let server = try LoopbackHTTPServer { request in
            request.path == "/old" ? .respond(status: 302, headers: ["Location": "/new"]) : .ok("new")
        }
        defer { server.stop() }
        let transport = URLSessionTransport(baseURL: server.baseURL)
        let plain = try await transport.send(TransportRequest(method: "GET", path: "/old"))
        #expect(plain.statusCode == 200 && plain.body == Data("new".utf8))
        #expect(server.requests.map(\.path) == ["/old", "/new"])

        let keyed = try await transport.send(
            TransportRequest(method: "POST", path: "/old", headers: [ErasureRequest.idempotencyKeyHeader: "k"]))
        #expect(keyed.statusCode == 302)
        #expect(server.requests.map(\.path) == ["/old", "/new", "/old"])
    }

    @Test func aRedirectLoopStopsAfterTheMaximum() async throws {
        let server = try LoopbackHTTPServer { request in .respond(status: 302, headers: ["Location": "/loop"]) }
        defer { server.stop() }
        let response = try await URLSessionTransport(baseURL: server.baseURL).send(
            TransportRequest(method: "GET", path: "/loop"))
        #expect(response.statusCode == 302)
        #expect(server.requests.count == URLSessionTransport.maximumRedirects + 1)
    }

    @Test func aPathThatLeavesTheOriginIsNotSent() async throws {
        let elsewhere = try LoopbackHTTPServer { _ in .ok() }
        defer { elsewhere.stop() }
        let server = try LoopbackHTTPServer { _ in .ok() }
        defer { server.stop() }
        let transport = URLSessionTransport(baseURL: server.baseURL)
        await #expect(throws: URLSessionTransportError.self) {
            _ = try await transport.send(TransportRequest(method: "GET", path: "\(elsewhere.baseURL.absoluteString)/x"))
        }
        await #expect(throws: URLSessionTransportError.self) {
            _ = try await transport.send(TransportRequest(method: "GET", path: "//127.0.0.1:\(elsewhere.port)/x"))
        }
        #expect(elsewhere.requests.isEmpty && server.requests.isEmpty)
    }

    @Test func aBodyOverTheLimitIsRefused() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(status: 200, body: Data(count: 2_000)) }
        defer { server.stop() }
        let transport = URLSessionTransport(baseURL: server.baseURL, maximumResponseSize: 1_000)
        await #expect(throws: URLSessionTransportError.self) {
            _ = try await transport.send(TransportRequest(method: "GET", path: "/big"))
        }
    }

    @Test func cancellingTheCallerEndsARequestTheServerNeverAnswers() async throws {
        let server = try LoopbackHTTPServer { _ in .neverAnswer }
        defer { server.stop() }
        let transport = URLSessionTransport(baseURL: server.baseURL)
        let call = Task { try await transport.send(TransportRequest(method: "GET", path: "/hang")) }
        // Bounded: wait for the request to arrive (at most 10 s), then cancel.
        for _ in 0..<1_000 where server.requests.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        call.cancel()
        await #expect(throws: (any Error).self) { _ = try await call.value }
    }

    @Test func anErasureThroughItIsNeverRedirected() async throws {
        let server = try LoopbackHTTPServer { request in
            request.path == "/api/erasure" ? .respond(status: 307, headers: ["Location": "/api/v2/erasure"]) : .ok()
        }
        defer { server.stop() }
        let privacy = gate(.analytics)
        let transport = GatedTransport(
            URLSessionTransport(baseURL: server.baseURL), features: .analytics, privacy: privacy, counter: IOCounter())
        let response = try await transport.sendExitRequest(
            TransportRequest(
                method: "POST", path: "/api/erasure", headers: [ErasureRequest.idempotencyKeyHeader: "key"]),
            permit: OneShotPermit(armed: true))
        #expect(response.statusCode == 307)
        #expect(server.requests.map(\.path) == ["/api/erasure"])
    }

    @Test func redirectBookkeepingIsEmptyAfterEveryRequestOnOneTransport() async throws {
        let server = try LoopbackHTTPServer { request in
            request.path == "/old" ? .respond(status: 302, headers: ["Location": "/new"]) : .ok("new")
        }
        defer { server.stop() }
        let transport = URLSessionTransport(baseURL: server.baseURL)
        for _ in 0..<200 {
            let response = try await transport.send(TransportRequest(method: "GET", path: "/old"))
            #expect(response.statusCode == 200)
            #expect(transport.redirectBookkeepingCount == 0)
        }
        #expect(server.requests.count == 400)
    }

    @Test func transportsMadeUsedAndReleasedInALoopLeaveNoSessionBehind() async throws {
        let server = try LoopbackHTTPServer { request in
            request.path == "/old" ? .respond(status: 302, headers: ["Location": "/new"]) : .ok("new")
        }
        defer { server.stop() }
        let delegates = WeakReferences()
        for _ in 0..<50 {
            let transport = URLSessionTransport(baseURL: server.baseURL)
            let response = try await transport.send(TransportRequest(method: "GET", path: "/old"))
            #expect(response.statusCode == 200)
            #expect(transport.redirectBookkeepingCount == 0)
            delegates.append(transport.sessionDelegate)
        }
        // A session keeps its delegate until it is invalidated: each one gone proves its session was invalidated
        // and released (with its connection pool), not kept until the process exits.
        #expect(delegates.count == 50)
        #expect(await eventually(turns: 2_000) { delegates.alive == 0 }, "\(delegates.alive) sessions still alive")
    }
}

/// Weak references to objects, to see them go.
private final class WeakReferences: @unchecked Sendable {
    private final class Box {
        weak var object: AnyObject?
        init(_ object: AnyObject) { self.object = object }
    }
    private let lock = NSLock()
    private var boxes: [Box] = []

    func append(_ object: AnyObject) { lock.withLock { boxes.append(Box(object)) } }
    var count: Int { lock.withLock { boxes.count } }
    var alive: Int { lock.withLock { boxes.filter { $0.object != nil }.count } }
}

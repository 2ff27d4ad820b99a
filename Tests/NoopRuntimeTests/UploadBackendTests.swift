import FeatureGate
import Foundation
import NoopRuntime
import PackageTestSupport
import Testing

/// An event as an SDK tracks it; encoded by `JSONEncoder` as `{"name": …, "value": …}`.
private struct Tap: Codable, Sendable, Hashable {
    var name: String
    var value: Int
}

/// One request as the server received it: its key and its events (identifier, event).
private struct Upload {
    var key: String?
    var events: [(id: String, event: Tap)]

    init(_ request: LoopbackHTTPServer.Request) throws {
        key = request.header("Idempotency-Key")
        let array = try #require(try JSONSerialization.jsonObject(with: request.body) as? [[String: Any]])
        events = try array.map { element in
            // Exactly the members the wire format names (no consent decided, no user set).
            #expect(Set(element.keys) == ["id", "anonymousId", "event"])
            let id = try #require(element["id"] as? String)
            let event = try JSONSerialization.data(withJSONObject: try #require(element["event"]))
            return (id, try JSONDecoder().decode(Tap.self, from: event))
        }
    }
}

/// The uploader the README ships, on the wire: `UploadBackend` over `URLSessionTransport` behind a gated transport,
/// against a loopback server that fails the way servers fail.
@Suite struct UploadBackendTests {
    private func buffer(
        _ server: LoopbackHTTPServer, clock: TestClock = TestClock()
    ) -> GatedEventBuffer<Tap> {
        let privacy = gate(.analytics)
        let uploads = GatedTransport(
            URLSessionTransport(baseURL: server.baseURL), features: .analytics, privacy: privacy, counter: IOCounter())
        return GatedEventBuffer(
            features: .analytics, capacity: 100, privacy: privacy,
            backends: [UploadBackend(transport: uploads, path: "/api/events")],
            retryPolicy: RetryPolicy(maxAttempts: 1, initialDelay: .zero, maxDelay: .zero), counter: IOCounter(),
            sleep: { _ in }, flushDeadline: .seconds(120), now: { clock.seconds },
            identifier: AnonymousIdentifier(privacy: privacy, url: nil))
    }

    /// A batch of `events` for one install.
    private func batch(_ events: Tap...) -> EventBatch<Tap> {
        EventBatch(events: events.map { IdentifiedEvent($0) }, anonymousId: UUID())
    }

    @Test func aBatchThatNamesNoInstallIsNotSent() async throws {
        let server = try LoopbackHTTPServer { _ in .ok("{}") }
        defer { server.stop() }
        let backend = uploadBackend(server)
        await #expect(throws: UploadBackendError.noAnonymousIdentifier) {
            try await backend.deliver(EventBatch(events: [IdentifiedEvent(Tap(name: "tap", value: 1))]))
        }
        await #expect(throws: UploadBackendError.noAnonymousIdentifier) {
            try await backend.deliver([Tap(name: "tap", value: 1)])
        }
        #expect(server.requests.isEmpty)
    }

    /// The backend alone, called directly.
    private func uploadBackend(_ server: LoopbackHTTPServer) -> UploadBackend<Tap> {
        UploadBackend(
            transport: GatedTransport(
                URLSessionTransport(baseURL: server.baseURL), features: .analytics, privacy: gate(.analytics),
                counter: IOCounter()),
            path: "/api/events")
    }

    @Test func aBatchWhoseAnswerWasLostIsSentAgainUnderTheSameKeyWithTheSameEventIdentifiers() async throws {
        // The server takes the first upload and the connection drops mid-answer; the second gets its 200.
        let server = try LoopbackHTTPServer(
            replies: [.cutMidResponse(status: 200, body: Data(#"{"accepted":3}"#.utf8))], then: .ok("{}"))
        defer { server.stop() }
        let events = buffer(server)
        let tracked = (1...3).map { Tap(name: "tap", value: $0) }
        for tap in tracked { try events.track(tap) }

        let lost = await events.flush()
        #expect(lost.backends.map(\.result) != [.delivered])
        let delivered = await events.flush()
        #expect(delivered.backends.map(\.result) == [.delivered])

        let uploads = try server.requests.map(Upload.init)
        try #require(uploads.count == 2)
        #expect(server.requests.allSatisfy { $0.method == "POST" && $0.path == "/api/events" })
        #expect(server.requests.allSatisfy { $0.header("Content-Type") == "application/json" })
        let key = try #require(uploads[0].key)
        #expect(UUID(uuidString: key) != nil)
        #expect(uploads[1].key == key)
        #expect(uploads[0].events.map(\.id) == uploads[1].events.map(\.id))
        #expect(uploads.allSatisfy { $0.events.map(\.event) == tracked })
        // Identifiers are version 4 UUID strings, one per event; deduplicating by them gives each event once.
        let ids = uploads[0].events.map(\.id)
        #expect(ids.allSatisfy { UUID(uuidString: $0) != nil && $0.dropFirst(14).first == "4" })
        var stored: [String: Tap] = [:]
        for upload in uploads {
            for (id, event) in upload.events where stored[id] == nil { stored[id] = event }
        }
        #expect(stored.count == 3)
        #expect(Set(stored.values) == Set(tracked))
    }

    @Test func aServiceUnavailableWithRetryAfterGetsNoSecondRequestUntilTheWaitHasPassed() async throws {
        let server = try LoopbackHTTPServer(
            replies: [.respond(status: 503, headers: ["Retry-After": "3"])], then: .ok("{}"))
        defer { server.stop() }
        let clock = TestClock()
        let events = buffer(server, clock: clock)
        for value in 1...4 { try events.track(Tap(name: "tap", value: value)) }

        let first = await events.flush()
        let asked = RetryAfterError(statusCode: 503, delay: .seconds(3))
        #expect(first.backends.map(\.result) == [.failed(String(describing: asked))])
        // Flushed over and over for 3 s (a tenth of a second apart on the buffer's clock): nothing is sent.
        for _ in 0..<29 {
            clock.advance(by: 0.1)
            let held = await events.flush()
            #expect(held.backends.map(\.attempts) == [0])
        }
        #expect(server.requests.count == 1)
        #expect(events.backlogs == ["upload": 4])

        clock.advance(by: 0.1)
        let after = await events.flush()
        #expect(after.backends.map(\.result) == [.delivered])
        let uploads = try server.requests.map(Upload.init)
        try #require(uploads.count == 2)
        #expect(uploads[0].key != nil && uploads[1].key == uploads[0].key)
        #expect(uploads[1].events.map(\.id) == uploads[0].events.map(\.id))
    }

    @Test(arguments: [429, 503])
    func aRetryAfterAnswerThrowsRetryAfterError(status: Int) async throws {
        let server = try LoopbackHTTPServer { _ in .respond(status: status, headers: ["Retry-After": "120"]) }
        defer { server.stop() }
        let backend = uploadBackend(server)
        await #expect(throws: RetryAfterError(statusCode: status, delay: .seconds(120))) {
            try await backend.deliver(batch(Tap(name: "tap", value: 1)))
        }
    }

    @Test(arguments: [
        (LoopbackReply.respond(status: 503), 503), (.respond(status: 500, headers: ["Retry-After": "5"]), 500),
        (.respond(status: 400), 400),
    ])
    func anotherFailureThrowsUploadRejected(reply: LoopbackReply, status: Int) async throws {
        let server = try LoopbackHTTPServer { _ in reply }
        defer { server.stop() }
        let backend = uploadBackend(server)
        let error = await #expect(throws: UploadRejected.self) {
            try await backend.deliver(batch(Tap(name: "tap", value: 1)))
        }
        #expect(error?.statusCode == status)
        // A key, and an identifier per event.
        let upload = try Upload(try #require(server.requests.first))
        #expect(upload.key.flatMap(UUID.init(uuidString:)) != nil)
        #expect(upload.events.map(\.event) == [Tap(name: "tap", value: 1)])
    }
}

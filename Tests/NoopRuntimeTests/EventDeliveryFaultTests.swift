import FeatureGate
import Foundation
import NoopRuntime
import PackageTestSupport
import Testing

/// An upload backend as an SDK writes one: POSTs the batch as JSON, each event with its identifier, under the
/// batch's `Idempotency-Key`; throws `RetryAfterError` on a 429 or 503 with `Retry-After`.
private struct HTTPUploadBackend: EventBackend {
    struct StatusError: Error { let status: Int }
    let server: LoopbackHTTPServer
    var name: String { "upload" }

    func deliver(_ events: [Int]) async throws {
        Issue.record("the buffer called the array form")
    }

    func deliver(_ batch: EventBatch<Int>) async throws {
        let body = "[" + batch.events.map { #"{"id":"\#($0.id)","value":\#($0.event)}"# }.joined(separator: ",") + "]"
        let response = try await LoopbackTransport(server: server).send(
            TransportRequest(
                method: "POST", path: "/api/events",
                headers: ["Idempotency-Key": batch.idempotencyKey.uuidString], body: Data(body.utf8)))
        if let wait = RetryAfterError(response: response) { throw wait }
        guard response.isSuccess else { throw StatusError(status: response.statusCode) }
    }
}

/// What the server received: each request's key and events (identifier, value).
private func received(_ server: LoopbackHTTPServer) -> [(key: String?, events: [(id: String, value: Int)])] {
    server.requests.map { request in
        let array = (try? JSONSerialization.jsonObject(with: request.body)) as? [[String: Any]] ?? []
        return (
            request.header("Idempotency-Key"),
            array.map { ($0["id"] as? String ?? "", $0["value"] as? Int ?? -1) }
        )
    }
}

@Suite struct EventDeliveryFaultTests {
    private func buffer(
        _ server: LoopbackHTTPServer, clock: TestClock = TestClock(), capacity: Int = 2_000,
        deadline: Duration = .seconds(120)
    ) -> GatedEventBuffer<Int> {
        GatedEventBuffer(
            features: .analytics, capacity: capacity, privacy: gate(.analytics),
            backends: [HTTPUploadBackend(server: server)], counter: IOCounter(), sleep: { _ in },
            flushDeadline: deadline, now: { clock.seconds })
    }

    @Test func retryAfterHoldsTheBackendBackAcrossFlushesUntilItPasses() async throws {
        let server = try LoopbackHTTPServer { _ in .respond(status: 503, headers: ["Retry-After": "30"]) }
        defer { server.stop() }
        let clock = TestClock()
        let events = buffer(server, clock: clock)
        for event in 1...5 { try events.track(event) }

        let first = await events.flush()
        #expect(first.backends.map(\.attempts) == [1])
        #expect(server.requests.count == 1)
        for _ in 0..<29 {
            clock.advance(by: 1)
            let held = await events.flush()
            #expect(held.backends.map(\.attempts) == [0])
            #expect(held.backends.first?.events == 5)
        }
        #expect(server.requests.count == 1)
        #expect(events.backlogs == ["upload": 5])
        clock.advance(by: 1)
        _ = await events.flush()
        #expect(server.requests.count == 2)
        let keys = received(server).map(\.key)
        #expect(keys[0] != nil && keys[0] == keys[1])
    }

    @Test func aLostResponseIsResentUnderTheSameKeyWithTheSameEventIdentifiers() async throws {
        // Every 8th upload is taken by the server and its answer cut: the client cannot know it arrived.
        let server = try LoopbackHTTPServer { request in
            request.index % 8 == 3 ? .cutMidResponse(status: 200, body: Data(#"{"ok":true}"#.utf8)) : .ok("{}")
        }
        defer { server.stop() }
        let events = buffer(server)
        var next = 0
        for _ in 0..<120 {
            for _ in 0..<10 {
                next += 1
                try events.track(next)
            }
            _ = await events.flush()
        }
        #expect(events.backlogs == ["upload": 0])

        let requests = received(server)
        let all = requests.flatMap(\.events)
        // At least once: the lost answers' batches arrived twice...
        #expect(all.count > 1_200)
        // ...and the copies carry the same key and identifiers, so deduplicating by either restores each event once.
        var byKey: [String: [String]] = [:]
        for request in requests {
            let ids = request.events.map(\.id)
            let key = try #require(request.key)
            if let earlier = byKey[key] { #expect(earlier == ids) }
            byKey[key] = ids
        }
        var seen: [String: Int] = [:]
        for event in all {
            if let value = seen[event.id] { #expect(value == event.value) }
            seen[event.id] = event.value
        }
        #expect(seen.count == 1_200)
        #expect(Set(seen.values) == Set(1...1_200))
        #expect(byKey.values.reduce(0) { $0 + $1.count } == 1_200)
        #expect(Set(all.map(\.id)).allSatisfy { UUID(uuidString: $0) != nil })
    }

    @Test func aFlushAgainstAServerThatNeverAnswersEndsAtItsDeadline() async throws {
        let server = try LoopbackHTTPServer { _ in .neverAnswer }
        defer { server.stop() }
        let events = buffer(server, deadline: .milliseconds(300))
        for event in 1...3 { try events.track(event) }

        let report = await events.flush()
        #expect(report.backends.map(\.result) == [.cancelled])
        #expect(events.backlogs == ["upload": 3])
        // Not stuck: the next flush runs (and is cut off again).
        #expect(await events.flush().outcome == .flushed)
    }
}

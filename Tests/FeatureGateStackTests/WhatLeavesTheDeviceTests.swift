import FeatureGate
import FeatureGateStack
import Foundation
import NoopRuntime
import PackageTestSupport
import Testing

/// An event of the test SDK.
private struct Tap: Codable, Sendable, Equatable {
    var button: String
}

/// One element of an upload's body, as a server reads it.
private struct Element {
    let keys: Set<String>
    let id: String?
    let anonymousId: String?
    let type: String?
    let button: String?
    /// `consent.categoryPreferences`, or `nil` when the element has no `consent`.
    let preferences: [String: Bool]?

    init(_ object: [String: Any]) {
        keys = Set(object.keys)
        id = object["id"] as? String
        anonymousId = object["anonymousId"] as? String
        type = object["type"] as? String
        button = (object["event"] as? [String: Any])?["button"] as? String
        preferences = (object["consent"] as? [String: Any])?["categoryPreferences"] as? [String: Bool]
    }

    static func all(in request: LoopbackHTTPServer.Request) throws -> [Element] {
        let array = try #require(try JSONSerialization.jsonObject(with: request.body) as? [[String: Any]])
        return array.map(Element.init)
    }
}

/// The README's stack against a loopback server: what leaves the device says who, under which consent, is sent
/// once, and is erased truthfully.
@Suite struct WhatLeavesTheDeviceTests {
    /// The README's steps 1 to 3 over a real `URLSessionTransport` to `server`, with a data directory of its own.
    private struct Wired {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "featuregate-wire-\(UUID().uuidString)")
        let stack: PrivacyStack
        let events: GatedEventBuffer<Tap>
        let erasure: ErasureRequest

        init(_ server: LoopbackHTTPServer, policy: ConsentPolicy? = nil) async {
            stack = PrivacyStack(
                configuration: PrivacyConfiguration(enabledFeatures: []), consentPolicy: policy,
                dataDirectory: directory)
            let uploads = stack.transport(URLSessionTransport(baseURL: server.baseURL), for: .analytics)
            events = stack.eventBuffer(
                of: Tap.self, for: .analytics, backends: [UploadBackend(transport: uploads, path: "/ev")])
            stack.register(
                StorageSubsystem(
                    "analytics", storage: stack.storage("analytics", for: .analytics), eventQueues: [events]))
            erasure = ErasureRequest(via: uploads) {
                TransportRequest(method: "DELETE", path: "/u/\($0?.uuidString ?? "")")
            }
            await stack.start(erasure: erasure)
        }

        func cleanUp() { try? FileManager.default.removeItem(at: directory) }

        /// Flushes until the batch is delivered (at most 5 flushes), and returns the last report. A flush whose
        /// deadline (30 s) passed keeps its batch for the next flush, and sends the same bytes again: in a full
        /// sanitizer run, the suite's CPU-bound tests kept the shared pool busy for longer than that, and one flush
        /// came back `cancelled` with nothing wrong in what it sent.
        func flushUntilDelivered() async -> FlushReport {
            var report = await events.flush()
            for _ in 1..<5 where report.backends.map(\.result) != [.delivered] {
                report = await events.flush()
            }
            return report
        }

        /// The stack's revoke-all with a patient deadline (2 minutes a step, not 2 s), for the same reason: what is
        /// checked is what it sends, not how soon.
        func revokeAll() async -> RevocationReport {
            await ConsentRevocation(
                consent: stack.consent, runtime: stack.runtime, identifier: stack.identifier, deadline: .seconds(120)
            ).revokeAll(erasure: erasure)
        }
    }

    @Test func everyElementNamesTheIdentifierTheErasureNames() async throws {
        let server = try LoopbackHTTPServer { _ in .ok("{}") }
        defer { server.stop() }
        let wired = await Wired(server)
        defer { wired.cleanUp() }

        try await wired.stack.consent.setStatus(.granted, for: .analytics, source: .user)
        try wired.events.track(Tap(button: "buy"))
        try wired.events.track(Tap(button: "pay"))
        let flushed = await wired.flushUntilDelivered()
        #expect(flushed.backends.map(\.result) == [.delivered], "\(flushed)")
        let report = await wired.revokeAll()

        // The upload (sent again, the same bytes, if a flush's deadline passed), then the erasure.
        let requests = server.requests
        try #require(requests.count >= 2)
        let uploads = requests.dropLast()
        #expect(uploads.allSatisfy { $0.method == "POST" && $0.body == requests[0].body })
        let elements = try Element.all(in: requests[0])
        #expect(elements.map(\.button) == [nil, "buy", "pay"])
        let anonymousId = try #require(elements.first?.anonymousId)
        #expect(UUID(uuidString: anonymousId) != nil)
        #expect(elements.allSatisfy { $0.anonymousId == anonymousId })
        let erasure = try #require(requests.last)
        #expect(erasure.method == "DELETE" && erasure.path == "/u/\(anonymousId)")
        #expect(report.erasure.wasSent && report.isComplete)
    }

    @Test func eachEventCarriesTheConsentInForceWhenTrackedAndEachChangeIsAnElement() async throws {
        let server = try LoopbackHTTPServer { _ in .ok("{}") }
        defer { server.stop() }
        let wired = await Wired(server)
        defer { wired.cleanUp() }

        try await wired.stack.consent.setStatus(.granted, for: .analytics, source: .user)
        try wired.events.track(Tap(button: "1"))
        try wired.events.track(Tap(button: "2"))
        try await wired.stack.consent.setStatus(.denied, for: .advertising, source: .user)
        try wired.events.track(Tap(button: "3"))
        try wired.events.track(Tap(button: "4"))
        // Nothing was uploaded before the flush: what each element carries was taken when it was tracked.
        #expect(server.requests.isEmpty)
        let flushed = await wired.flushUntilDelivered()
        #expect(flushed.backends.map(\.result) == [.delivered], "\(flushed)")

        let elements = try Element.all(in: try #require(server.requests.first))
        let granted = ["analytics": true]
        let refused = ["analytics": true, "advertising": false]
        #expect(elements.map(\.type) == ["consentPreferenceUpdated", nil, nil, "consentPreferenceUpdated", nil, nil])
        #expect(elements.map(\.button) == [nil, "1", "2", nil, "3", "4"])
        #expect(elements.map(\.preferences) == [granted, granted, granted, refused, refused, refused])
        // The wire format, exactly: no userId unless the SDK set one, no event in a consent change.
        #expect(elements[0].keys == ["id", "anonymousId", "type", "consent"])
        #expect(elements[1].keys == ["id", "anonymousId", "event", "consent"])
        #expect(Set(elements.compactMap(\.id)).count == 6)

        wired.events.userId = "user-7"
        try wired.events.track(Tap(button: "5"))
        _ = await wired.flushUntilDelivered()
        let second = try JSONSerialization.jsonObject(with: try #require(server.requests.last).body) as? [[String: Any]]
        #expect(second?.first?["userId"] as? String == "user-7")
    }

    @Test func aChangeThatClosesTheBuffersFeatureSendsNothingThroughIt() async throws {
        let server = try LoopbackHTTPServer { _ in .ok("{}") }
        defer { server.stop() }
        let wired = await Wired(server)
        defer { wired.cleanUp() }
        try await wired.stack.consent.setStatus(.granted, for: .analytics, source: .user)
        try wired.events.track(Tap(button: "purged by the refusal"))
        try await wired.stack.consent.setStatus(.denied, for: .analytics, source: .user)
        #expect(wired.events.bufferedCount == 0, "the refusal queued nothing and purged the rest")
        try await wired.stack.consent.setStatus(.granted, for: .analytics, source: .user)
        try wired.events.track(Tap(button: "after"))
        _ = await wired.flushUntilDelivered()

        let elements = try Element.all(in: try #require(server.requests.first))
        #expect(elements.map(\.type) == ["consentPreferenceUpdated", nil])
        #expect(elements.map(\.button) == [nil, "after"])
        #expect(elements.map(\.preferences) == [["analytics": true], ["analytics": true]])
    }

    @Test func anEventTrackedWithNothingDecidedCarriesNoConsentKey() async throws {
        let server = try LoopbackHTTPServer { _ in .ok("{}") }
        defer { server.stop() }
        // Analytics runs until asked (an opt-out category): on by the app with no category answered.
        let wired = await Wired(
            server,
            policy: ConsentPolicy(
                version: 1, features: [.analytics: [.analytics, .tagsAndAttributes]], permittedUntilAsked: [.analytics])
        )
        defer { wired.cleanUp() }
        // Nothing decided, so no `consent` (never an empty object).
        wired.stack.privacy.enableFeatures(.analytics)
        try wired.events.track(Tap(button: "1"))
        _ = await wired.flushUntilDelivered()
        let elements = try Element.all(in: try #require(server.requests.first))
        #expect(elements.map(\.keys) == [["id", "anonymousId", "event"]])
    }

    @Test func aBatchRetriedAfterADroppedResponseIsByteIdentical() async throws {
        // The server takes the first upload and the connection drops mid-answer; the retry gets its 200.
        let server = try LoopbackHTTPServer(
            replies: [.cutMidResponse(status: 200, body: Data(#"{"accepted":3}"#.utf8))], then: .ok("{}"))
        defer { server.stop() }
        let wired = await Wired(server)
        defer { wired.cleanUp() }
        try await wired.stack.consent.setStatus(.granted, for: .analytics, source: .user)
        for button in ["a", "b", "c"] { try wired.events.track(Tap(button: button)) }

        // Flushed until delivered: the stack's buffer retries within a flush (after 1 s, RetryPolicy.standard) and
        // keeps a batch that failed for the next flush, so however the attempts fall, the batch is sent again.
        let delivered = await wired.flushUntilDelivered()
        #expect(delivered.backends.map(\.result) == [.delivered], "\(delivered)")

        let requests = server.requests
        try #require(requests.count >= 2)
        let key = try #require(requests[0].header("Idempotency-Key"))
        #expect(requests.allSatisfy { $0.header("Idempotency-Key") == key })
        #expect(requests.allSatisfy { $0.body == requests[0].body }, "every attempt sends the same bytes")
    }

    @Test func aRevokeAllWithNoIdentifierEverIssuedSaysSo() async throws {
        let server = try LoopbackHTTPServer { _ in .ok("{}") }
        defer { server.stop() }
        let wired = await Wired(server)
        defer { wired.cleanUp() }
        try await wired.stack.consent.setStatus(.granted, for: .analytics, source: .user)
        try wired.events.track(Tap(button: "tracked, never uploaded"))

        let report = await wired.stack.revokeAll(erasure: wired.erasure)
        #expect(server.requests.isEmpty, "an erasure that names no one is not sent")
        #expect(String(describing: report.erasure) == "nothing to erase on the server: no identifier was issued")
        #expect(String(describing: report).contains("erasure request: nothing to erase on the server"))
        #expect(!report.erasureStillOwed)
        #expect(report.isComplete)
    }

    @Test func aRevokeAllWithNoIdentifierAfterRequestsWentOutIsNotComplete() async throws {
        let server = try LoopbackHTTPServer { _ in .ok("{}") }
        defer { server.stop() }
        let wired = await Wired(server)
        defer { wired.cleanUp() }
        let push = wired.stack.transport(URLSessionTransport(baseURL: server.baseURL), for: .push)
        try await wired.stack.consent.setStatus(.granted, for: .analytics, source: .user)
        await wired.stack.settle()  // analytics started: revoke-all's erasure may go out
        wired.stack.privacy.enableFeatures(.push)
        _ = try await push.send(TransportRequest(method: "POST", path: "/register"))  // names no identifier

        let report = await wired.stack.revokeAll(erasure: wired.erasure)
        #expect(server.requests.map(\.method) == ["POST", "DELETE"])
        #expect(!report.isComplete)
        #expect(String(describing: report).contains("the erasure request named no anonymous identifier"))
    }
}

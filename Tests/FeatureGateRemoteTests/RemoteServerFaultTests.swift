import FeatureGate
import FeatureGateRemote
import Foundation
import NoopRuntime
import PackageTestSupport
import Testing

/// The refresher against a loopback server that fails on purpose: Retry-After, a zero interval, huge validators,
/// failure envelopes.
@Suite struct RemoteServerFaultTests {
    static let path = "/api/remote-data/app/KEY/ios"

    func makeRefresher(_ gate: PrivacyManager, _ server: LoopbackHTTPServer, _ clock: TestClock) -> RemoteDataRefresher
    {
        RemoteDataRefresher(privacy: gate, transport: LoopbackTransport(server: server), path: Self.path) {
            clock.seconds
        }
    }

    @Test(arguments: [503, 429])
    func retryAfterHoldsEveryRequestBackUntilItPasses(status: Int) async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let server = try LoopbackHTTPServer { _ in .respond(status: status, headers: ["Retry-After": "3600"]) }
        defer { server.stop() }
        let clock = TestClock()
        let refresher = makeRefresher(directory.launch(enabled: [.push]), server, clock)

        guard case .failed = await refresher.refreshIfDue() else { throw Failure("the 503 was not a failure") }
        // Twenty minutes of foregrounds every 10 s, and forced refreshes: nothing goes out.
        for _ in 0..<120 {
            clock.advance(by: 10)
            guard case .notDue = await refresher.refreshIfDue() else { throw Failure("asked before Retry-After") }
            guard case .notDue = await refresher.refresh() else { throw Failure("forced before Retry-After") }
        }
        #expect(server.requests.count == 1)
        clock.advance(by: 3600 - 1200 - 1)
        guard case .notDue = await refresher.refresh() else { throw Failure("asked a second early") }
        clock.advance(by: 1)
        _ = await refresher.refreshIfDue()
        #expect(server.requests.count == 2)
    }

    @Test func aHugeRetryAfterIsCappedAtOneDay() async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let server = try LoopbackHTTPServer(
            replies: [.respond(status: 503, headers: ["Retry-After": "31536000"])], then: .ok("{}"))
        defer { server.stop() }
        let clock = TestClock()
        let refresher = makeRefresher(directory.launch(enabled: [.push]), server, clock)
        _ = await refresher.refreshIfDue()
        clock.advance(by: 86_399)
        guard case .notDue = await refresher.refresh() else { throw Failure("asked before a day passed") }
        clock.advance(by: 1)
        guard case .updated = await refresher.refresh() else { throw Failure("still held after a day") }
        #expect(server.requests.count == 2)
    }

    @Test func aZeroRefreshIntervalCountsAsTheTenSecondFloor() async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let zero = #"{"disable_features":[{"modules":["push"],"remote_data_refresh_interval":0}]}"#
        let server = try LoopbackHTTPServer { _ in .ok(zero) }
        defer { server.stop() }
        let clock = TestClock()
        let refresher = makeRefresher(directory.launch(enabled: [.push, .analytics]), server, clock)
        for _ in 0..<50 { _ = await refresher.refreshIfDue() }
        #expect(server.requests.count == 1)
        clock.advance(by: 9.9)
        for _ in 0..<50 { _ = await refresher.refreshIfDue() }
        #expect(server.requests.count == 1)
        clock.advance(by: 0.1)
        _ = await refresher.refreshIfDue()
        #expect(server.requests.count == 2)
        // After a relaunch too: the kept payload's interval is floored.
        let relaunched = makeRefresher(directory.launch(enabled: [.push, .analytics]), server, clock)
        _ = await relaunched.refreshIfDue()
        for _ in 0..<50 { _ = await relaunched.refreshIfDue() }
        #expect(server.requests.count == 3)
    }

    @Test func aValidatorOverOneKibibyteIsNeitherKeptNorSent() async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let huge = "\"" + String(repeating: "e", count: 100_000) + "\""
        let server = try LoopbackHTTPServer { request in
            request.index == 0
                ? .ok(String(decoding: Payloads.disabling("push"), as: UTF8.self), headers: ["ETag": huge])
                : .respond(status: 304)
        }
        defer { server.stop() }
        let clock = TestClock()
        let gate = directory.launch(enabled: [.push, .analytics])
        let refresher = makeRefresher(gate, server, clock)
        guard case .updated = await refresher.refreshIfDue() else { throw Failure("the payload was not applied") }
        #expect(!gate.isEnabled(.push))
        #expect(gate.keptRemoteLayer?.entityTag == nil)
        clock.advance(by: 10)
        _ = await refresher.refreshIfDue()
        _ = await makeRefresher(directory.launch(enabled: [.push, .analytics]), server, clock).refreshIfDue()
        #expect(server.requests.count == 3)
        #expect(server.requests.dropFirst().allSatisfy { $0.header("If-None-Match") == nil })
    }

    @Test func aValidatorOfOneKibibyteIsKeptAndSent() async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let tag = "\"" + String(repeating: "e", count: 1022) + "\""
        let server = try LoopbackHTTPServer { request in
            request.index == 0 ? .ok("{}", headers: ["ETag": tag]) : .respond(status: 304)
        }
        defer { server.stop() }
        let clock = TestClock()
        let refresher = makeRefresher(directory.launch(enabled: [.push]), server, clock)
        _ = await refresher.refreshIfDue()
        clock.advance(by: 10)
        guard case .notModified = await refresher.refreshIfDue() else { throw Failure("304 not read") }
        #expect(server.requests.last?.header("If-None-Match") == tag)
    }

    @Test(arguments: [
        #"{"ok":false,"payloads":[]}"#, #"{"ok":"false","payloads":[]}"#, #"{"ok":null}"#, #"{"ok":0,"payloads":[]}"#,
    ])
    func aFailureEnvelopeKeepsTheLastGoodLayer(envelope: String) async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let server = try LoopbackHTTPServer(replies: [
            .ok(String(decoding: Payloads.pushFor10, as: UTF8.self)), .ok(envelope),
        ])
        defer { server.stop() }
        let clock = TestClock()
        let gate = directory.launch(enabled: [.push, .analytics])
        let refresher = makeRefresher(gate, server, clock)
        _ = await refresher.refreshIfDue()
        #expect(!gate.isEnabled(.push))
        clock.advance(by: 10)
        guard case .failed(let reason) = await refresher.refreshIfDue() else {
            throw Failure("the failure envelope was applied")
        }
        #expect(reason.contains("ok"))
        #expect(!gate.isEnabled(.push))
        #expect(!directory.launch(enabled: [.push, .analytics]).isEnabled(.push))
    }

    @Test(arguments: [201, 202, 204, 206])
    func onlyA200CarriesRemoteDataAsInAirshipsClients(status: Int) async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let lifted = #"{"ok":true,"payloads":[]}"#
        let server = try LoopbackHTTPServer(replies: [
            .ok(String(decoding: Payloads.pushFor10, as: UTF8.self)),
            .respond(status: status, body: Data(lifted.utf8)),
        ])
        defer { server.stop() }
        let clock = TestClock()
        let gate = directory.launch(enabled: [.push, .analytics])
        let refresher = makeRefresher(gate, server, clock)
        _ = await refresher.refreshIfDue()
        clock.advance(by: 10)
        guard case .failed = await refresher.refreshIfDue() else { throw Failure("a \(status) was applied") }
        #expect(!gate.isEnabled(.push))
    }

    @Test func aRedirectToAnotherHostIsNotFollowedNorGivenTheValidators() async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let elsewhere = try LoopbackHTTPServer { _ in .ok(#"{"disabled_features":["all"]}"#) }
        defer { elsewhere.stop() }
        let server = try LoopbackHTTPServer { request in
            request.index == 0
                ? .ok(String(decoding: Payloads.pushFor10, as: UTF8.self), headers: ["ETag": "\"v1\""])
                : .respond(status: 302, headers: ["Location": "\(elsewhere.baseURL.absoluteString)/payload"])
        }
        defer { server.stop() }
        let clock = TestClock()
        let gate = directory.launch(enabled: [.push, .analytics])
        let refresher = RemoteDataRefresher(
            privacy: gate, transport: URLSessionTransport(baseURL: server.baseURL), path: Self.path
        ) { clock.seconds }
        _ = await refresher.refreshIfDue()
        clock.advance(by: 10)
        guard case .failed(let reason) = await refresher.refreshIfDue() else { throw Failure("the 302 was applied") }
        #expect(reason == "status 302")
        #expect(server.requests.last?.header("If-None-Match") == "\"v1\"")
        #expect(elsewhere.requests.isEmpty)
        #expect(!gate.isEnabled(.push) && gate.isEnabled(.analytics))
    }
}

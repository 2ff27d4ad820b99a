import FeatureGate
import Foundation
import NoopRuntime
import PackageTestSupport
import Testing

/// An SDK with one analytics subsystem whose erasure request goes to a loopback server that fails on purpose.
private struct ErasureSDK {
    let privacy = gate()
    let consent: ConsentManager
    let runtime: SubsystemRuntime
    let clock = TestClock()
    let revocation: ConsentRevocation
    /// The same revocation with a deadline no loaded machine reaches: for a resend that must get through.
    let unhurriedRevocation: ConsentRevocation
    let erasure: ErasureRequest
    let server: LoopbackHTTPServer

    init(
        _ server: LoopbackHTTPServer, deadline: Duration = unhurriedDeadline, viaURLSession: Bool = false
    )
        async throws
    {
        self.server = server
        let (privacy, clock) = (privacy, clock)
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        let runtime = SubsystemRuntime(privacy: privacy)
        (self.consent, self.runtime) = (consent, runtime)
        runtime.register(RecordingSubsystem("analytics", needs: .analytics, log: Collector()))
        runtime.start()
        let identifier = AnonymousIdentifier(privacy: privacy, url: nil)
        func revocation(deadline: Duration) -> ConsentRevocation {
            var revocation = ConsentRevocation(
                consent: consent, runtime: runtime, identifier: identifier, deadline: deadline)
            revocation.now = { [clock] in clock.now }
            return revocation
        }
        self.revocation = revocation(deadline: deadline)
        unhurriedRevocation = revocation(deadline: unhurriedDeadline)
        erasure = ErasureRequest(
            via: GatedTransport(
                viaURLSession ? URLSessionTransport(baseURL: server.baseURL) : LoopbackTransport(server: server),
                features: .analytics, privacy: privacy, counter: IOCounter())
        ) { _ in TransportRequest(method: "POST", path: "/api/erasure") }
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        await runtime.settle()
        // Something was uploaded under the install's identifier: the erasure names it.
        _ = try identifier.current()
    }

    var keys: [String?] { server.requests.map { $0.header(ErasureRequest.idempotencyKeyHeader) } }
}

@Suite struct ErasureFaultTests {
    @Test(arguments: [500, 503, 408, 429])
    func anErrorStatusLeavesTheErasureOwedUntilTheNextCallSendsItWithTheSameKey(status: Int) async throws {
        let server = try LoopbackHTTPServer(replies: [.respond(status: status)])
        defer { server.stop() }
        let sdk = try await ErasureSDK(server)

        let first = await sdk.revocation.revokeAll(erasure: sdk.erasure)
        #expect(!first.erasure.wasSent, "\(first.erasure)")
        guard case .retryLater(let response, nil) = first.erasure else {
            Issue.record("expected retryLater, got \(first.erasure)")
            return
        }
        #expect(response.statusCode == status)
        #expect(first.erasureStillOwed && first.isComplete)
        #expect(sdk.privacy.pendingRevocation?.isErasureOwed == true)

        // The next call sends it again (its own permit: the runtime's was spent on the first attempt).
        let second = await sdk.revocation.revokeAll(erasure: sdk.erasure)
        #expect(second.erasure.wasSent, "\(second.erasure)")
        #expect(!second.erasureStillOwed && sdk.privacy.pendingRevocation == nil)
        let key = try #require(first.requestKey).uuidString
        #expect(sdk.keys == [key, key])
        // Done: a third call sends nothing.
        #expect(await sdk.revocation.revokeAll(erasure: sdk.erasure).erasure.wasSent == false)
        #expect(server.requests.count == 2)
    }

    @Test func aTransportFailureLeavesTheErasureOwedUntilTheNextStartSendsIt() async throws {
        let server = try LoopbackHTTPServer(replies: [.closeWithoutAnswer])
        defer { server.stop() }
        let sdk = try await ErasureSDK(server)

        let first = await sdk.revocation.revokeAll(erasure: sdk.erasure)
        guard case .failed = first.erasure else {
            Issue.record("expected failed, got \(first.erasure)")
            return
        }
        #expect(first.erasureStillOwed)
        let finished = try #require(await sdk.revocation.finishPendingRevocation(erasure: sdk.erasure))
        #expect(finished.erasure.wasSent && !finished.erasureStillOwed)
        let key = try #require(first.requestKey).uuidString
        #expect(sdk.keys == [key, key])
    }

    @Test(arguments: [301, 302, 307, 308])
    func aRedirectIsNotFollowedAndLeavesTheErasureOwed(status: Int) async throws {
        let server = try LoopbackHTTPServer(replies: [
            .respond(status: status, headers: ["Location": "http://127.0.0.1:1/elsewhere"])
        ])
        defer { server.stop() }
        let sdk = try await ErasureSDK(server)

        let first = await sdk.revocation.revokeAll(erasure: sdk.erasure)
        guard case .redirected = first.erasure else {
            Issue.record("expected redirected, got \(first.erasure)")
            return
        }
        #expect("\(first.erasure)".contains("never follows"))
        #expect(first.erasureStillOwed)
        #expect(server.requests.map(\.path) == ["/api/erasure"])
        let finished = try #require(await sdk.revocation.finishPendingRevocation(erasure: sdk.erasure))
        #expect(finished.erasure.wasSent)
        #expect(server.requests.map(\.path) == ["/api/erasure", "/api/erasure"])
    }

    @Test(arguments: [400, 401, 403, 404, 410, 422])
    func aClientErrorIsARejectionAFailureOfTheRevocationNeverReportedAsSent(status: Int) async throws {
        let server = try LoopbackHTTPServer(replies: [.respond(status: status)])
        defer { server.stop() }
        let sdk = try await ErasureSDK(server)

        let report = await sdk.revocation.revokeAll(erasure: sdk.erasure)
        #expect(!report.erasure.wasSent)
        #expect(!report.isComplete)
        #expect(report.failures.map(\.description) == ["the server rejected the erasure request with status \(status)"])
        #expect("\(report)".contains("rejected: the server answered \(status)"))
        // Not retried: the same request would be refused again.
        #expect(!report.erasureStillOwed && sdk.privacy.pendingRevocation == nil)
        #expect(await sdk.revocation.finishPendingRevocation(erasure: sdk.erasure) == nil)
        #expect(server.requests.count == 1)
    }

    @Test func retryAfterHoldsEveryAttemptBackUntilItPasses() async throws {
        let server = try LoopbackHTTPServer(replies: [.respond(status: 503, headers: ["Retry-After": "3600"])])
        defer { server.stop() }
        let sdk = try await ErasureSDK(server)

        let first = await sdk.revocation.revokeAll(erasure: sdk.erasure)
        let until = sdk.clock.now.addingTimeInterval(3600)
        guard case .retryLater(_, until) = first.erasure else {
            Issue.record("expected retryLater until \(until), got \(first.erasure)")
            return
        }
        #expect(sdk.privacy.pendingRevocation?.erasureNotBefore == until)

        for _ in 0..<5 {
            sdk.clock.advance(by: 600)
            let report = try #require(await sdk.revocation.finishPendingRevocation(erasure: sdk.erasure))
            guard case .waitingForRetryAfter(until) = report.erasure else {
                Issue.record("expected waitingForRetryAfter, got \(report.erasure)")
                return
            }
            #expect(report.erasureStillOwed)
        }
        #expect(server.requests.count == 1)

        sdk.clock.advance(by: 600)
        let finished = try #require(await sdk.revocation.finishPendingRevocation(erasure: sdk.erasure))
        #expect(finished.erasure.wasSent)
        #expect(server.requests.count == 2)
    }

    @Test func aHugeRetryAfterIsCappedAtOneDay() async throws {
        let server = try LoopbackHTTPServer(replies: [.respond(status: 429, headers: ["Retry-After": "99999999999"])])
        defer { server.stop() }
        let sdk = try await ErasureSDK(server)

        _ = await sdk.revocation.revokeAll(erasure: sdk.erasure)
        #expect(sdk.privacy.pendingRevocation?.erasureNotBefore == sdk.clock.now.addingTimeInterval(86_400))
        sdk.clock.advance(by: 86_400)
        #expect(try #require(await sdk.revocation.finishPendingRevocation(erasure: sdk.erasure)).erasure.wasSent)
    }

    @Test func anErasureTheServerNeverAnswersIsCutOffAtTheDeadlineAndStaysOwed() async throws {
        let server = try LoopbackHTTPServer(replies: [.neverAnswer])
        defer { server.stop() }
        let sdk = try await ErasureSDK(server, deadline: .milliseconds(500), viaURLSession: true)

        let report = await sdk.revocation.revokeAll(erasure: sdk.erasure)
        guard case .failed = report.erasure else {
            Issue.record("expected failed, got \(report.erasure)")
            return
        }
        #expect(report.cancelled.map(\.subsystem).contains("erasure request"))
        #expect(report.erasureStillOwed)
        // The resend gets time enough: a busy machine can take longer than 500 ms to answer it.
        let finished = try #require(await sdk.unhurriedRevocation.finishPendingRevocation(erasure: sdk.erasure))
        #expect(finished.erasure.wasSent, "\(finished.erasure)")
        let key = try #require(report.requestKey).uuidString
        #expect(sdk.keys == [key, key])
    }
}

@Suite struct RetryAfterTests {
    @Test func readsDeltaSecondsAndHTTPDatesOnlyOn429And503() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)  // Fri, 15 Jan 2027 08:00:00 GMT
        func response(_ status: Int, _ value: String) -> TransportResponse {
            TransportResponse(statusCode: status, headers: ["retry-after": value])
        }
        #expect(RetryAfter.delay(in: response(503, "30"), now: now) == .seconds(30))
        #expect(RetryAfter.delay(in: response(429, " 0 "), now: now) == .zero)
        #expect(RetryAfter.delay(in: response(500, "30"), now: now) == nil)
        #expect(RetryAfter.delay(in: response(503, "-5"), now: now) == nil)
        #expect(RetryAfter.delay(in: response(503, "soon"), now: now) == nil)
        #expect(RetryAfter.delay(in: response(503, "Fri, 15 Jan 2027 09:00:00 GMT"), now: now) == .seconds(3600))
        #expect(RetryAfter.delay(in: response(503, "Friday, 15-Jan-27 08:01:00 GMT"), now: now) == .seconds(60))
        #expect(RetryAfter.delay(in: response(503, "Fri Jan 15 08:00:10 2027"), now: now) == .seconds(10))
        #expect(RetryAfter.delay(in: response(503, "Thu, 14 Jan 2027 09:00:00 GMT"), now: now) == .zero)
        #expect(RetryAfter.delay(in: response(503, "Fri, 15 Jan 2100 09:00:00 GMT"), now: now) == RetryAfter.maximum)
        #expect(RetryAfter.delay(in: response(429, "86401"), now: now) == .seconds(86_400))
    }
}

@Suite struct PendingRevocationRetryAfterTests {
    @Test func theEarliestResendIsKeptToTheSecondRoundedUpAndAnOlderRecordHasNone() throws {
        var pending = PendingRevocation(anonymousIdentifier: UUID(), isErasureOwed: true)
        pending.erasureNotBefore = Date(timeIntervalSince1970: 1_800_003_600.4)
        let decoded = try JSONDecoder().decode(PendingRevocation.self, from: pending.encoded())
        #expect(decoded.erasureNotBefore == Date(timeIntervalSince1970: 1_800_003_601))
        pending.erasureNotBefore = nil
        let older = try JSONDecoder().decode(PendingRevocation.self, from: pending.encoded())
        #expect(older.erasureNotBefore == nil && older.isErasureOwed)
        #expect(!String(decoding: pending.encoded(), as: UTF8.self).contains("erasureNotBefore"))
    }
}

import FeatureGate
import FeatureGateRemote
import Foundation
import NoopRuntime
import Testing

/// A transport that answers from a script and records every request; `onSend` runs while the request is "on the
/// wire", before the answer.
final class ScriptedTransport: Transport, @unchecked Sendable {
    enum Answer {
        case response(TransportResponse)
        case error
    }

    private let lock = NSLock()
    private var answers: [Answer]
    private var recorded: [TransportRequest] = []
    private var inFlight = 0
    private(set) var maximumInFlight = 0
    let onSend: (@Sendable () async -> Void)?

    init(_ answers: [Answer], onSend: (@Sendable () async -> Void)? = nil) {
        self.answers = answers
        self.onSend = onSend
    }

    var requests: [TransportRequest] { lock.withLock { recorded } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let answer = lock.withLock { () -> Answer in
            recorded.append(request)
            inFlight += 1
            maximumInFlight = max(maximumInFlight, inFlight)
            return answers.isEmpty ? .response(TransportResponse(statusCode: 304)) : answers.removeFirst()
        }
        await onSend?()
        lock.withLock { inFlight -= 1 }
        switch answer {
        case .response(let response): return response
        case .error: throw URLError(.notConnectedToInternet)
        }
    }
}

/// A clock the test moves.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var seconds: Double = 1_000
    var now: Double { lock.withLock { seconds } }
    func advance(_ delta: Double) { lock.withLock { seconds += delta } }
}

/// The refresher: fetch gating, conditional requests, intervals, backoff, and the kept layer on every failure.
@Suite struct RemoteDataRefresherTests {
    static func ok(_ payload: Data, etag: String? = nil, lastModified: String? = nil) -> ScriptedTransport.Answer {
        var headers: [String: String] = [:]
        if let etag { headers["etag"] = etag }
        if let lastModified { headers["Last-Modified"] = lastModified }
        return .response(TransportResponse(statusCode: 200, headers: headers, body: payload))
    }

    func refresher(_ gate: PrivacyManager, _ transport: ScriptedTransport, _ clock: ManualClock) -> RemoteDataRefresher
    {
        RemoteDataRefresher(privacy: gate, transport: transport, path: "/api/remote-data/app/KEY/ios") { clock.now }
    }

    @Test func aFullyDisabledGateSendsNothing() async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let gate = directory.launch(enabled: [])
        let transport = ScriptedTransport([Self.ok(Payloads.nothing)])
        let refresher = refresher(gate, transport, ManualClock())
        guard case .nothingEnabled = await refresher.refreshIfDue() else { throw Failure("fetched while disabled") }
        guard case .nothingEnabled = await refresher.refresh() else { throw Failure("fetched while disabled") }
        #expect(transport.requests.isEmpty)
        #expect(directory.files.isEmpty)
    }

    @Test func consentWithholdingEverythingSendsNothing() async throws {
        let gate = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: [.analytics]), store: InMemoryFeatureStore(),
            consentPolicy: .default)
        let transport = ScriptedTransport([])
        guard case .nothingEnabled = await refresher(gate, transport, ManualClock()).refresh() else {
            throw Failure("fetched while consent withholds everything")
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func aRemoteAllCanBeLiftedByTheServer() async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let gate = directory.launch(enabled: [.push, .analytics])
        let transport = ScriptedTransport([Self.ok(Payloads.disabling("all")), Self.ok(Payloads.nothing)])
        let clock = ManualClock()
        let refresher = refresher(gate, transport, clock)
        _ = await refresher.refreshIfDue()
        #expect(gate.enabledFeatures == [])
        clock.advance(10)
        guard case .updated = await refresher.refreshIfDue() else {
            throw Failure("the lifting payload was not fetched")
        }
        #expect(gate.enabledFeatures == [.push, .analytics])
        #expect(transport.requests.count == 2)
    }

    @Test func requestsAreConditionalOnTheKeptValidatorsEvenAfterARelaunch() async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let modified = "Wed, 01 May 2024 10:00:00 GMT"
        let transport = ScriptedTransport([Self.ok(Payloads.disabling("push"), etag: "\"v1\"", lastModified: modified)])
        _ = await refresher(directory.launch(), transport, ManualClock()).refresh()
        #expect(transport.requests[0].headers["If-None-Match"] == nil)

        let relaunched = directory.launch()
        let next = ScriptedTransport([.response(TransportResponse(statusCode: 304))])
        guard case .notModified = await refresher(relaunched, next, ManualClock()).refreshIfDue() else {
            throw Failure("304 was not read as not modified")
        }
        #expect(next.requests[0].headers["If-None-Match"] == "\"v1\"")
        #expect(next.requests[0].headers["If-Modified-Since"] == modified)
        #expect(next.requests[0].method == "GET" && next.requests[0].path == "/api/remote-data/app/KEY/ios")
        #expect(!relaunched.isEnabled(.push))
    }

    @Test func theIntervalIsTenSecondsOrWhatTheApplyingRulesSay() async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let minute = Data(#"{"disable_features":[{"modules":["push"],"remote_data_refresh_interval":60}]}"#.utf8)
        let transport = ScriptedTransport([Self.ok(Payloads.nothing), Self.ok(minute)])
        let clock = ManualClock()
        let refresher = refresher(directory.launch(), transport, clock)
        _ = await refresher.refreshIfDue()
        clock.advance(9.9)
        guard case .notDue = await refresher.refreshIfDue() else { throw Failure("fetched before 10 s") }
        clock.advance(0.1)
        _ = await refresher.refreshIfDue()
        clock.advance(59)
        guard case .notDue = await refresher.refreshIfDue() else { throw Failure("fetched before 60 s") }
        clock.advance(1)
        _ = await refresher.refreshIfDue()
        #expect(transport.requests.count == 3)
    }

    @Test func everyFailureKeepsTheLayerAndBacksOffExponentially() async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let gate = directory.launch()
        try gate.applyRemotePayload(Payloads.disabling("push"))
        let kept = try Data(contentsOf: directory.data.remoteLayerFile)
        let transport = ScriptedTransport([
            .error, .response(TransportResponse(statusCode: 500)), Self.ok(Payloads.invalid), Self.ok(Data("[".utf8)),
            .response(TransportResponse(statusCode: 404)), Self.ok(Payloads.nothing),
        ])
        let clock = ManualClock()
        let refresher = refresher(gate, transport, clock)
        for wait in [10.0, 20, 40, 80, 160] {
            guard case .failed = await refresher.refreshIfDue() else { throw Failure("a failure was not reported") }
            #expect(gate.remoteDisabledFeatures == .push)
            #expect(try Data(contentsOf: directory.data.remoteLayerFile) == kept)
            clock.advance(wait - 0.5)
            guard case .notDue = await refresher.refreshIfDue() else { throw Failure("no backoff of \(wait) s") }
            clock.advance(0.5)
        }
        guard case .updated = await refresher.refreshIfDue() else { throw Failure("no recovery") }
        #expect(gate.remoteDisabledFeatures == [])
    }

    @Test func theBackoffStopsAtItsMaximum() async throws {
        let gate = RemoteTestDirectory().launch()
        let transport = ScriptedTransport(Array(repeating: .error, count: 12))
        let clock = ManualClock()
        let refresher = refresher(gate, transport, clock)
        for _ in 0..<12 {
            _ = await refresher.refreshIfDue()
            clock.advance(600)
        }
        #expect(transport.requests.count == 12)
    }

    @Test func aGateDisabledWhileTheRequestIsInFlightKeepsNothing() async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let gate = directory.launch(enabled: [.push])
        let transport = ScriptedTransport([Self.ok(Payloads.disabling("push"))]) {
            gate.disableFeatures(.all)
        }
        guard case .nothingEnabled = await refresher(gate, transport, ManualClock()).refresh() else {
            throw Failure("a payload was kept by a disabled gate")
        }
        #expect(transport.requests.count == 1)
        #expect(!directory.files.contains(PrivacyDataDirectory.remoteLayerFileName))
    }

    @Test func concurrentRefreshesSendOneRequestAtATime() async throws {
        let gate = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .all), store: InMemoryFeatureStore(),
            remoteLayer: RemoteLayerFile(
                url: FileManager.default.temporaryDirectory.appending(path: "unused-\(UUID().uuidString)"),
                interpreter: RemoteConfigInterpreter(
                    target: RemoteConfigTarget(platform: .ios, sdkVersion: "1.0", appVersion: "1.0"))))
        let transport = ScriptedTransport([]) { await Task.yield() }
        let refresher = refresher(gate, transport, ManualClock())
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<2_000 { group.addTask { _ = await refresher.refresh() } }
        }
        #expect(transport.maximumInFlight == 1)
        #expect(!transport.requests.isEmpty)
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

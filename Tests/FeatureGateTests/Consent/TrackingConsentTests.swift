import FeatureGate
import Foundation
import Testing

@Suite struct TrackingConsentTests {
    @Test(arguments: [
        (TrackingAuthorizationStatus.notDetermined, ConsentStatus.unknown),
        (.restricted, .restricted),
        (.denied, .denied),
        (.authorized, .granted),
    ])
    func statusMapsOntoAdvertisingConsent(status: TrackingAuthorizationStatus, expected: ConsentStatus) async throws {
        #expect(status.advertisingConsent == expected)
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger())
        let tracking = TrackingConsent(authorizer: ScriptedTrackingAuthorizer(status: status), consent: consent)
        try await tracking.synchronize()
        #expect(await consent.status(for: .advertising) == expected)
        let records = try await consent.records()
        #expect(records.map(\.source) == (expected == .unknown ? [] : [.att]))
    }

    @Test func thePromptIsShownOnlyWhenNotDetermined() async throws {
        let authorizer = ScriptedTrackingAuthorizer(status: .notDetermined, answer: .authorized)
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger())
        let tracking = TrackingConsent(authorizer: authorizer, consent: consent)
        #expect(try await tracking.requestIfNeeded() == .prompted(.authorized))
        #expect(try await tracking.requestIfNeeded() == .alreadyDetermined(.authorized))
        #expect(authorizer.requestCount == 1)
        #expect(await consent.status(for: .advertising) == .granted)
    }

    @Test(arguments: TrackingAuthorizationStatus.allCases.filter { $0 != .notDetermined })
    func aDecidedStatusIsNeverPromptedAndSaysWhy(status: TrackingAuthorizationStatus) async throws {
        let authorizer = ScriptedTrackingAuthorizer(status: status, answer: .authorized)
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger())
        let outcome = try await TrackingConsent(authorizer: authorizer, consent: consent).requestIfNeeded()
        #expect(outcome == .alreadyDetermined(status))
        #expect(authorizer.requestCount == 0)
    }

    @Test func aPromptTheSystemDidNotShowIsNotReportedAsPromptedAndDecidesNothing() async throws {
        // The system returns notDetermined without showing anything while the app is not active.
        let authorizer = ScriptedTrackingAuthorizer(status: .notDetermined, answer: .notDetermined)
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger())
        let tracking = TrackingConsent(authorizer: authorizer, consent: consent)
        #expect(try await tracking.requestIfNeeded() == .notShown)
        #expect(authorizer.requestCount == 1)
        #expect(try await consent.records().isEmpty)
        #expect(await consent.needsPrompt(for: .advertising))
    }

    @Test(arguments: TrackingAuthorizationStatus.allCases)
    func theAdvertisingIdentifierIsNilUnlessAuthorizedAndGranted(status: TrackingAuthorizationStatus) async throws {
        let identifier = UUID()
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger())
        let authorizer = ScriptedTrackingAuthorizer(status: status, advertisingIdentifier: identifier)
        let tracking = TrackingConsent(authorizer: authorizer, consent: consent)
        #expect(await tracking.advertisingIdentifier == nil, "nothing synchronized yet: advertising is unknown")
        try await tracking.synchronize()
        #expect(await tracking.advertisingIdentifier == (status == .authorized ? identifier : nil))
        try await consent.setStatus(.denied, for: .advertising, source: .user)
        #expect(await tracking.advertisingIdentifier == nil)
    }

    @Test func theAllZeroIdentifierIsNeverReturned() async throws {
        let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let authorizer = ScriptedTrackingAuthorizer(status: .authorized, advertisingIdentifier: zero)
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger())
        let tracking = TrackingConsent(authorizer: authorizer, consent: consent)
        try await tracking.synchronize()
        #expect(await consent.status(for: .advertising) == .granted)
        #expect(await tracking.advertisingIdentifier == nil)
    }

    @Test func withoutAUsageDescriptionTheAppIsNotPromptedAndTheStatusStaysNotDetermined() async throws {
        let authorizer = ScriptedTrackingAuthorizer(
            status: .notDetermined, answer: .authorized, hasUsageDescription: false)
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger())
        let outcome = try await TrackingConsent(authorizer: authorizer, consent: consent).requestIfNeeded()
        #expect(outcome == .missingUsageDescription)
        #expect(outcome.status == .notDetermined)
        #expect(authorizer.requestCount == 0)
        #expect(try await consent.records().isEmpty)
    }

    @Test func concurrentRequestsShareOnePrompt() async throws {
        for round in 0..<20 {
            let scripted = ScriptedTrackingAuthorizer(status: .notDetermined, answer: .authorized)
            let authorizer = HeldPromptAuthorizer(scripted)
            let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger())
            let tracking = TrackingConsent(authorizer: authorizer, consent: consent)
            let callers = 100
            let started = LockedCounter()
            let outcomes = try await withThrowingTaskGroup(of: TrackingPromptOutcome.self) { group in
                for _ in 0..<callers {
                    group.addTask {
                        started.increment()
                        return try await tracking.requestIfNeeded()
                    }
                }
                // Every caller starts while the prompt is on screen, then the person answers.
                while started.value < callers { await Task.yield() }
                for _ in 0..<1_000 { await Task.yield() }
                authorizer.answer()
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(scripted.requestCount == 1, "round \(round): the system was asked more than once")
            #expect(outcomes.allSatisfy { $0 == .prompted(.authorized) || $0 == .alreadyDetermined(.authorized) })
            #expect(outcomes.contains(.prompted(.authorized)))
            #expect(try await consent.records().count == 1)
        }
    }
}

/// A counter safe to bump from many tasks.
private final class LockedCounter: Sendable {
    private let count = LockedValue(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}

/// Holds every prompt on screen until ``answer()``, then lets the scripted authorizer answer: the window in which
/// other callers arrive.
private final class HeldPromptAuthorizer: TrackingAuthorizer {
    private let scripted: ScriptedTrackingAuthorizer
    private let answered = LockedValue<(done: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    init(_ scripted: ScriptedTrackingAuthorizer) { self.scripted = scripted }

    var status: TrackingAuthorizationStatus { scripted.status }
    var rawAdvertisingIdentifier: UUID? { scripted.rawAdvertisingIdentifier }

    func requestAuthorization() async -> TrackingAuthorizationStatus {
        await withCheckedContinuation { continuation in
            let resumeNow = answered.withLock { state in
                if state.done { return true }
                state.waiting.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
        return await scripted.requestAuthorization()
    }

    func answer() {
        let waiting = answered.withLock { state in
            state.done = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}

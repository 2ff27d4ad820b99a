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
}

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

    @Test(arguments: TrackingAuthorizationStatus.allCases)
    func theAdvertisingIdentifierIsNilUnlessAuthorized(status: TrackingAuthorizationStatus) {
        let identifier = UUID()
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger())
        let authorizer = ScriptedTrackingAuthorizer(status: status, advertisingIdentifier: identifier)
        let tracking = TrackingConsent(authorizer: authorizer, consent: consent)
        #expect(tracking.advertisingIdentifier == (status == .authorized ? identifier : nil))
    }

    @Test func theAllZeroIdentifierIsNeverReturned() {
        let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let authorizer = ScriptedTrackingAuthorizer(status: .authorized, advertisingIdentifier: zero)
        let consent = ConsentManager(privacy: manager([]), ledger: InMemoryConsentLedger())
        #expect(TrackingConsent(authorizer: authorizer, consent: consent).advertisingIdentifier == nil)
    }
}

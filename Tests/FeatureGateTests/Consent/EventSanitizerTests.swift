import FeatureGate
import Testing

@Suite struct EventSanitizerTests {
    static let event: [String: EventValue] = [
        "screen": "home",
        "advertising_id": "AD-1",
        "third_party_id": "TP-1",
        "email": "a@example.com",
    ]

    /// Every combination of advertising and third-party consent, with contacts on and off.
    @Test(arguments: ConsentStatus.allCases, ConsentStatus.allCases)
    func stripsWhatTheStateDoesNotAllow(advertising: ConsentStatus, thirdParty: ConsentStatus) {
        for features in [Feature.analytics, [.analytics, .contacts]] {
            let sanitizer = EventSanitizer(
                features: features,
                consent: [.advertising: advertising, .thirdPartySharing: thirdParty]
            )
            let result = sanitizer.sanitize(Self.event)
            var expectedKeys: Set<String> = ["screen"]
            if advertising == .granted { expectedKeys.insert("advertising_id") }
            if thirdParty == .granted { expectedKeys.insert("third_party_id") }
            if features.contains(.contacts) { expectedKeys.insert("email") }
            #expect(Set(result.properties.keys) == expectedKeys)
            #expect(Set(result.removedKeys) == Set(Self.event.keys).subtracting(expectedKeys))
            #expect(result.removedKeys == result.removedKeys.sorted())
            for key in expectedKeys { #expect(result.properties[key] == Self.event[key]) }
        }
    }

    @Test func missingConsentCountsAsUnknown() {
        let result = EventSanitizer(features: .all, consent: [:]).sanitize(Self.event)
        #expect(result.removedKeys == ["advertising_id", "third_party_id"])
    }

    @Test func untaggedKeysCanBeDropped() {
        let policy = FieldPolicy(requirements: ["screen": .none], untaggedKeys: .drop)
        let result = EventSanitizer(policy: policy, features: .all, consent: [:]).sanitize(["screen": "a", "x": 1])
        #expect(result.properties == ["screen": "a"])
        #expect(result.removedKeys == ["x"])
        let tagged = policy.tagging("x", with: .feature(.push))
        #expect(EventSanitizer(policy: tagged, features: .push, consent: [:]).sanitize(["x": 1]).properties == ["x": 1])
    }

    @Test func aSanitizerFromTheConsentManagerReflectsTheCurrentState() async throws {
        let consent = ConsentManager(privacy: manager(.contacts), ledger: InMemoryConsentLedger())
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        #expect(
            await consent.sanitizer().sanitize(Self.event).removedKeys == ["advertising_id", "email", "third_party_id"])
        try await consent.setStatus(.granted, for: .advertising, source: .user)
        try await consent.setStatus(.granted, for: .thirdPartySharing, source: .user)
        #expect(await consent.sanitizer().sanitize(Self.event).removedKeys == [])
    }
}

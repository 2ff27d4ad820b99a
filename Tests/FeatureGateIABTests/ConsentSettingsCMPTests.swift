import FeatureGate
import FeatureGateIAB
import Foundation
import Observation
import Testing

/// The settings-screen model (`ConsentSettings`, in FeatureGate) follows a consent platform's answer too.
// ConsentSettings is @Observable: iOS 17 / macOS 14 and later (ConsentSettingsSnapshotTests cover the floor).
@MainActor
@Suite struct ConsentSettingsCMPTests {
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    @Test func aCMPsAnswerShowsWithTheCMPSource() async throws {
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore())
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        let settings = await ConsentSettings(consent: consent)
        let fired = LockedValue(false)
        withObservationTracking {
            _ = settings.entries
        } onChange: {
            fired.withLock { $0 = true }
        }

        let keys: [String: CMPValue] = [
            CMPKey.gdprApplies: .number(1), CMPKey.publisherConsent: .string("1000000100"),
        ]
        await CMPConsentSource(consentManager: consent, keys: keys).refresh()
        for _ in 0..<10_000 where settings.status(for: .analytics) != .granted { await Task.yield() }

        #expect(fired.withLock { $0 })
        #expect(settings.entries.first { $0.category == .analytics }?.decidedBy == .cmp)
        #expect(settings.status(for: .advertising) == .denied)
    }
}

import FeatureGate
import Foundation
import Testing

/// One way to do each thing: the spellings that stay, and that the renamed ones still answer the same.
@Suite struct OneWayPerThingTests {
    private func gate(_ features: Feature) -> PrivacyManager {
        PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: features), store: InMemoryFeatureStore())
    }

    @Test func reasonForASetOfSeveralFlagsNamesTheFlagThatHoldsItOffAndNeverTraps() {
        let privacy = gate([.push, .contacts])
        let off = privacy.reason(for: [.push, .analytics, .contacts])
        #expect(off.feature == .analytics)
        #expect(!off.isEnabled)
        let on = privacy.reason(for: [.push, .contacts])
        #expect(on.feature == .push && on.isEnabled)
        let none = privacy.reason(for: [])
        #expect(none.feature == [] && !none.isEnabled)
        #expect(privacy.reason(for: .push) == privacy.reasons(for: .push)[0])
    }

    @Test func isAnyEnabledWithoutAnArgumentAsksAboutEveryFlag() {
        #expect(gate(.contacts).isAnyEnabled())
        #expect(!gate([]).isAnyEnabled())
        let privacy = gate(.push)
        privacy.disableFeatures(.push)
        #expect(!privacy.isAnyEnabled())
        privacy.enableFeatures(Feature(rawValue: 1 << 20))
        #expect(privacy.isAnyEnabled() == (privacy.enabledFeatures != []))
    }

    @Test func consentUpdatesDeliverEveryChangeInOrderToEachLoop() async throws {
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore(),
            consentPolicy: .default)
        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        let count = 1_000
        let loops = (0..<4).map { _ in
            var iterator = consent.updates.makeAsyncIterator()
            return Task {
                var seen: [ConsentStatus] = []
                while seen.count < count, let change = await iterator.next() { seen.append(change.current) }
                return seen
            }
        }
        for index in 0..<count {
            try await consent.setStatus(index.isMultiple(of: 2) ? .granted : .denied, for: .analytics, source: .user)
        }
        let expected = (0..<count).map { $0.isMultiple(of: 2) ? ConsentStatus.granted : .denied }
        for loop in loops { #expect(await loop.value == expected) }
    }
}

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

/// The renamed spellings of this module (`isAnyFeatureEnabled()`, `observeFromNow(_:)`, `applyAnswer(_:for:from:)`)
/// still compile and do what their new names do: the one place outside the migration notes that uses them.
@Suite struct RenamedFeatureGateSpellingsTests {
    @available(*, deprecated)
    @Test func theRenamedSpellingsStillCompileAndForwardToTheirNewNames() async throws {
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .push), store: InMemoryFeatureStore(),
            consentPolicy: .default)
        #expect(privacy.isAnyFeatureEnabled() == privacy.isAnyEnabled())

        let changes = LockedChanges()
        let (current, token) = privacy.observeFromNow { changes.append($0) }
        #expect(current == privacy.enabledFeatures)
        privacy.disableFeatures(.push)
        #expect(changes.all.map(\.current) == [privacy.enabledFeatures])
        token.cancel()

        let consent = ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger())
        let record = try await consent.applyAnswer(.granted, for: .analytics, from: .cmp)
        #expect(record?.newStatus == .granted)
        #expect(await consent.status(for: .analytics) == .granted)
    }
}

/// The changes an observer saw, from any thread.
private final class LockedChanges: @unchecked Sendable {
    private let lock = NSLock()
    private var changes: [FeatureChange] = []

    func append(_ change: FeatureChange) { lock.withLock { changes.append(change) } }
    var all: [FeatureChange] { lock.withLock { changes } }
}

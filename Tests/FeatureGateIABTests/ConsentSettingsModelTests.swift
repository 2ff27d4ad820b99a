import FeatureGate
import FeatureGateIAB
import Foundation
import Observation
import Testing

/// The settings-screen model: statuses with who and when, setters through the manager, and observation of changes
/// from every source (the user here, a CMP, ATT, deny-all), checked with `withObservationTracking`.
@MainActor
@Suite struct ConsentSettingsModelTests {
    private func manager(ledger: any ConsentLedger = InMemoryConsentLedger()) -> ConsentManager {
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore())
        return ConsentManager(privacy: privacy, ledger: ledger)
    }

    /// Yields to the main actor until `condition` holds (at most 10,000 times); no clock involved.
    private func settle(_ condition: () -> Bool) async {
        for _ in 0..<10_000 where !condition() { await Task.yield() }
    }

    /// Whether reading `entries` is invalidated by `change`.
    private func observesChange(of model: ConsentSettingsModel, during change: () async -> Void) async -> Bool {
        let fired = LockedValue(false)
        withObservationTracking {
            _ = model.entries
        } onChange: {
            fired.withLock { $0 = true }
        }
        await change()
        await settle { fired.withLock { $0 } }
        return fired.withLock { $0 }
    }

    @Test func startsFromTheManagersStatusesWithWhoAndWhen() async throws {
        let consent = manager()
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        let model = await ConsentSettingsModel(consentManager: consent)
        #expect(model.entries.map(\.category) == [.advertising, .analytics, .thirdPartySharing])
        let analytics = try #require(model.entry(for: .analytics))
        #expect(analytics.status == .granted && analytics.decidedBy == .user && analytics.decidedAt != nil)
        #expect(model.entry(for: .advertising)?.status == .unknown)
        #expect(model.entry(for: .advertising)?.decidedBy == nil)
    }

    @Test func theSetterGoesThroughTheManagerAndTheRowFollows() async throws {
        let consent = manager()
        let model = await ConsentSettingsModel(consentManager: consent)
        let observed = await observesChange(of: model) {
            await model.setStatus(.granted, for: .thirdPartySharing)
        }
        #expect(observed)
        await settle { model.entry(for: .thirdPartySharing)?.status == .granted }
        #expect(model.entry(for: .thirdPartySharing)?.decidedBy == .user)
        #expect(await consent.status(for: .thirdPartySharing) == .granted)
        #expect(try await consent.records().last?.source == .user)
    }

    @Test func aCMPsAnswerShowsWithTheCMPSource() async throws {
        let consent = manager()
        let model = await ConsentSettingsModel(consentManager: consent)
        let keys: [String: CMPValue] = [
            CMPKey.gdprApplies: .number(1), CMPKey.publisherConsent: .string("1000000100"),
        ]
        let source = CMPConsentSource(consentManager: consent, keys: keys)
        #expect(await observesChange(of: model) { await source.refresh() })
        await settle { model.entry(for: .analytics)?.status == .granted }
        #expect(model.entry(for: .analytics)?.decidedBy == .cmp)
        #expect(model.entry(for: .advertising)?.status == .denied)
    }

    @Test func attAndDenyAllShowToo() async throws {
        let consent = manager()
        let model = await ConsentSettingsModel(consentManager: consent)
        try await consent.setStatus(.granted, for: .advertising, source: .att)
        await settle { model.entry(for: .advertising)?.decidedBy == .att }
        #expect(model.entry(for: .advertising)?.status == .granted)
        #expect(await observesChange(of: model) { _ = try? await consent.denyAll(source: .user) })
        await settle { model.entries.allSatisfy { $0.status == .denied } }
        #expect(model.entries.allSatisfy { $0.status == .denied && $0.decidedBy == .user })
    }

    @Test func aRefusedGrantIsReportedAndNotShown() async throws {
        let ledger = FlakyLedger()
        let consent = manager(ledger: ledger)
        let model = await ConsentSettingsModel(consentManager: consent)
        ledger.failing.withLock { $0 = true }
        await model.setStatus(.granted, for: .analytics)
        #expect(model.lastError?.applied == false)
        #expect(model.entry(for: .analytics)?.status == .unknown)
    }

    @Test func manyConcurrentChangesEndAtTheManagersState() async throws {
        let consent = manager()
        let model = await ConsentSettingsModel(consentManager: consent)
        let categories: [ConsentCategory] = [.analytics, .advertising, .thirdPartySharing]
        let statuses: [ConsentStatus] = [.granted, .denied, .unknown]
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<3_000 {
                group.addTask {
                    _ = try? await consent.setStatus(
                        statuses[(index / 3) % 3], for: categories[index % 3], source: index % 2 == 0 ? .user : .cmp)
                }
            }
        }
        let final = await consent.allStatuses
        await settle { model.entries.allSatisfy { final[$0.category] == $0.status } }
        for entry in model.entries { #expect(entry.status == final[entry.category], "\(entry.category)") }
    }
}

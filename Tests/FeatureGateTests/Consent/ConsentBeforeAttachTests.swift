import FeatureGate
import Foundation
import Testing

/// The moment between creating the gate and attaching its consent manager: a gate given the policy reads every
/// category as unanswered, so an opt-in category's features wait for the ledger.
@Suite struct ConsentBeforeAttachTests {
    /// Analytics was granted in an earlier run; the configuration turns analytics and push on.
    private func relaunch(
        policy: ConsentPolicy?, ledger: InMemoryConsentLedger, store: InMemoryFeatureStore
    ) -> PrivacyManager {
        PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: [.analytics, .push]), store: store,
            consentPolicy: policy)
    }

    private func grantedInAnEarlierRun() async throws -> (InMemoryConsentLedger, InMemoryFeatureStore) {
        let ledger = InMemoryConsentLedger()
        let store = InMemoryFeatureStore()
        let privacy = relaunch(policy: .default, ledger: ledger, store: store)
        try await ConsentManager(privacy: privacy, ledger: ledger).setStatus(.granted, for: .analytics, source: .user)
        #expect(privacy.isEnabled(.analytics))
        return (ledger, store)
    }

    @Test func aGateGivenThePolicyWithholdsMappedFeaturesUntilTheConsentManagerAttaches() async throws {
        let (ledger, store) = try await grantedInAnEarlierRun()
        let privacy = relaunch(policy: .default, ledger: ledger, store: store)
        #expect(privacy.enabledFeatures == .push, "mapped features ran before consent was read")
        #expect(privacy.reason(for: .analytics).withholdingConsent == [.analytics: .unknown])

        let changes = Collector<FeatureChange>()
        let token = privacy.observe { changes.append($0) }
        defer { token.cancel() }
        let consent = ConsentManager(privacy: privacy, ledger: ledger)
        #expect(consent.policy == .default)
        #expect(privacy.enabledFeatures == [.analytics, .tagsAndAttributes, .push])
        // Attaching only widened: no disable edge, so no stop, purge or opt-out at launch.
        #expect(changes.all.map(\.disabled) == [[]])
    }

    /// A grant from before a policy bump is stale: with the policy, analytics never runs at this launch, not even
    /// for a moment. Without it, the gate runs analytics until the consent manager attaches and then revokes it.
    @Test func aStaleGrantNeverRunsWhenTheGateHasThePolicy() async throws {
        let (ledger, store) = try await grantedInAnEarlierRun()
        let bumped = ConsentPolicy(version: 2, features: ConsentPolicy.default.features)

        let withPolicy = relaunch(policy: bumped, ledger: ledger, store: store)
        let changes = Collector<FeatureChange>()
        let token = withPolicy.observe { changes.append($0) }
        defer { token.cancel() }
        #expect(!withPolicy.isEnabled(.analytics))
        _ = ConsentManager(privacy: withPolicy, ledger: ledger)
        #expect(!withPolicy.isEnabled(.analytics))
        #expect(changes.all.isEmpty)

        let withoutPolicy = relaunch(policy: nil, ledger: ledger, store: store)
        #expect(withoutPolicy.isEnabled(.analytics), "the documented window without the policy")
        _ = ConsentManager(privacy: withoutPolicy, policy: bumped, ledger: ledger)
        #expect(!withoutPolicy.isEnabled(.analytics))
    }

    @Test func aStoredRefusalCountsBeforeTheConsentManagerAttaches() async throws {
        let store = InMemoryFeatureStore(
            record: FeatureStateRecord(enabledFeatures: [], decidedFeatures: [], deniedConsentCategories: [.analytics])
                .encoded())
        let policy = ConsentPolicy(
            version: 1, features: ConsentPolicy.default.features, permittedUntilAsked: [.analytics, .thirdPartySharing])
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: [.analytics, .contacts]), store: store,
            consentPolicy: policy)
        // Opt-out categories run until asked, but a stored refusal is an answer.
        #expect(privacy.enabledFeatures == .contacts)
        #expect(privacy.reason(for: .analytics).withholdingConsent == [.analytics: .denied])
    }
}

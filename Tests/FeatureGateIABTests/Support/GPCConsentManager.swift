import FeatureGate

/// A gate and its consent manager, whose policy treats `thirdPartySharing` as sale or sharing and whose region is opt-out, over a
/// gate with `contacts` enabled: where a GPC signal (the `gpc` source) decides.
func gpcConsentManager() -> (PrivacyManager, ConsentManager) {
    let policy = ConsentPolicy(
        version: 1, features: ConsentPolicy.default.features, saleOrSharing: [.thirdPartySharing],
        unanswered: UnansweredConsentRules(default: .optOut))
    let privacy = PrivacyManager(
        configuration: PrivacyConfiguration(enabledFeatures: .contacts), store: InMemoryFeatureStore(),
        consentPolicy: policy)
    return (privacy, ConsentManager(privacy: privacy, ledger: InMemoryConsentLedger()))
}

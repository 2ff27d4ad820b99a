import FeatureGate

/// What an app creates at launch on a data directory: a gate on its state file, nothing enabled by configuration,
/// with `policy`, and a consent manager on its ledger file.
public func launchGateAndConsent(
    on data: PrivacyDataDirectory, policy: ConsentPolicy,
    diagnosticHandler: (@Sendable (ConsentDiagnostic) -> Void)? = nil
) -> (privacy: PrivacyManager, consent: ConsentManager) {
    let privacy = PrivacyManager(
        configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
        consentPolicy: policy)
    let consent = ConsentManager(
        privacy: privacy, ledger: FileConsentLedger(url: data.consentLedgerFile), diagnosticHandler: diagnosticHandler)
    return (privacy, consent)
}

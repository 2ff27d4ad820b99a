// A launch, as the issue measures it (report.py, "Launch allocations"): a fresh process to its first `isEnabled`,
// with the gate and the consent manager over a data directory. `launch-probe DIR prepare` writes the directory first
// (analytics granted, push enabled); `launch-probe DIR` is the launch that is counted.
import FeatureGate
import Foundation

let data = PrivacyDataDirectory(url: URL(filePath: CommandLine.arguments[1]))
let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])
let privacy = PrivacyManager(
    configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
    consentPolicy: policy)
let consent = ConsentManager(privacy: privacy, ledger: FileConsentLedger(url: data.consentLedgerFile))
if CommandLine.arguments.count > 2 {
    _ = try await consent.setStatus(.granted, for: .analytics, source: .user)
    privacy.enableFeatures(.push)
    await consent.waitForLedgerVerification()
}
print(privacy.isEnabled(.analytics))
exit(0)

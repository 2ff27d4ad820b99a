// `takeaway`: one take-away made while another process holds the data directory's lock (the test keeps it
// stopped), for DurableTakeAwayTests.
//
//   feature-store-writer takeaway DIR consent|disable|revoke
//                     on DIR (analytics granted, messageCenter enabled before), denies analytics, disables
//                     messageCenter, or calls revokeAll; prints `returned` once the call returned, then waits to be
//                     killed.
import FeatureGate
import Foundation
import NoopRuntime
import PackageTestSupport

func takeAway(directory: URL, kind: String) async {
    let data = PrivacyDataDirectory(url: directory)
    let (privacy, consent) = launchGateAndConsent(
        on: data, policy: ConsentPolicy(version: 1, features: [.analytics: .analytics]))
    switch kind {
    case "consent":
        _ = try? await consent.setStatus(.denied, for: .analytics, source: .user)
    case "disable":
        privacy.disableFeatures(.messageCenter)
    case "revoke":
        let runtime = SubsystemRuntime(privacy: privacy)
        let identifier = AnonymousIdentifier(privacy: privacy, url: data.anonymousIdentifierFile)
        let revocation = ConsentRevocation(
            consent: consent, runtime: runtime, identifier: identifier, deadline: .milliseconds(500))
        _ = await revocation.revokeAll()
    default:
        exit(2)
    }
    FileHandle.standardOutput.write(Data("returned\n".utf8))
    while true { sleep(60) }
}

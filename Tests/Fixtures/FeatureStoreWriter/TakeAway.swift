// `takeaway`: one take-away made while another process holds the data directory's lock (the test keeps it
// stopped), for DurableTakeAwayTests.
//
//   feature-store-writer takeaway DIR consent|disable|revoke|killswitch
//                     on DIR (analytics granted, messageCenter enabled before), denies analytics, disables
//                     messageCenter, or calls revokeAll (over the identifier file DIR holds, if any); with `killswitch`, on DIR as RemoteLayerLockTests prepares it
//                     (push and analytics enabled by the configuration, a kept payload disabling push), applies a
//                     payload disabling analytics; prints `returned` once the call returned, then waits to be killed.
import FeatureGate
import FeatureGateRemote
import Foundation
import NoopRuntime
import PackageTestSupport

func takeAway(directory: URL, kind: String) async {
    let data = PrivacyDataDirectory(url: directory)
    if kind == "killswitch" {
        let target = RemoteConfigTarget(platform: .ios, sdkVersion: "17.2.0", appVersion: "1.0.3")
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: [.push, .analytics]),
            store: FileFeatureStore(url: data.stateFile),
            remoteLayer: RemoteLayerFile(
                url: data.remoteLayerFile, interpreter: RemoteConfigInterpreter(target: target)))
        _ = try? privacy.applyRemotePayload(Data(#"{"disabled_features":["analytics"]}"#.utf8))
        FileHandle.standardOutput.write(Data("returned\n".utf8))
        while true { sleep(60) }
    }
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
        // A deadline far longer than the tests wait for `returned`: revoke-all must not wait for the lock at all to
        // delete the identifier's file (issue 47), whatever its deadline.
        let revocation = ConsentRevocation(
            consent: consent, runtime: runtime, identifier: identifier, deadline: .seconds(120))
        _ = await revocation.revokeAll()
    default:
        exit(2)
    }
    FileHandle.standardOutput.write(Data("returned\n".utf8))
    while true { sleep(60) }
}

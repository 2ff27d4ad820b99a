// A small runnable example of the gate. NoopRuntime's issue grows it into the full consent demo.
import FeatureGate

let privacy = PrivacyManager(
    configuration: PrivacyConfiguration(enabledFeatures: []),  // default-off
    store: InMemoryFeatureStore()
)
let token = privacy.observe { change in
    print("changed: \(change.previous) -> \(change.current)")
}

print("start: \(privacy.enabledFeatures); analytics allowed: \(privacy.isEnabled(.analytics))")
privacy.enableFeatures(.analytics)
privacy.enableFeatures(.push)
privacy.remoteDisabledFeatures = .push
for reason in privacy.reasons(for: [.analytics, .push, .contacts]) { print(reason) }
privacy.disableFeatures(.all)
print("end: \(privacy.enabledFeatures)")
withExtendedLifetime(token) {}

// One `isEnabled` call, linking NoopRuntime and what it depends on (see report.py, "Binary size per module").
import FeatureGate
import NoopRuntime

let privacy = PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore())
print(privacy.isEnabled(.analytics))

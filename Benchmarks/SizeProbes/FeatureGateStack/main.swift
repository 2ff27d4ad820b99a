// One `isEnabled` call, linking FeatureGateStack and what it depends on (see report.py, "Binary size per module").
import FeatureGate
import FeatureGateStack

let privacy = PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore())
print(privacy.isEnabled(.analytics))

// One `isEnabled` call, linking FeatureGateIAB and what it depends on (see report.py, "Binary size per module").
import FeatureGate
import FeatureGateIAB

let privacy = PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore())
print(privacy.isEnabled(.analytics))

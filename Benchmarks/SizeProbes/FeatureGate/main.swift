// One `isEnabled` call, linking FeatureGate (see report.py, "Binary size per module").
import FeatureGate

let privacy = PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore())
print(privacy.isEnabled(.analytics))

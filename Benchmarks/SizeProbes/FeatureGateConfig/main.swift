// One `isEnabled` call, linking FeatureGateConfig and what it depends on (see report.py, "Binary size per module").
import FeatureGate
import FeatureGateConfig

let privacy = PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore())
print(privacy.isEnabled(.analytics))

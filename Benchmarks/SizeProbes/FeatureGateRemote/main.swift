// One `isEnabled` call, linking FeatureGateRemote and what it depends on (see report.py, "Binary size per module").
import FeatureGate
import FeatureGateRemote

let privacy = PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore())
print(privacy.isEnabled(.analytics))

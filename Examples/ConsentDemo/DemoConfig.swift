import FeatureGate
import FeatureGateConfig
import Foundation

/// Reads the demo's config file with FeatureGateConfig's strict reader (JSON or plist, format from the content).
///
/// A missing file means every feature disabled; any other problem is a `ConfigError` listing every diagnostic
/// with its key path, line, what was found and what was expected. It fails closed: never "all" by accident.
///
/// - Returns: The configuration, and notes to print (the source, and the reader's warnings).
func readDemoConfig(at path: String) throws(ConfigError) -> (configuration: PrivacyConfiguration, notes: [String]) {
    guard FileManager.default.fileExists(atPath: path) else {
        return (PrivacyConfiguration(enabledFeatures: []), ["\(path) not found: every feature starts disabled"])
    }
    let result = try ConfigReader().read(contentsOf: URL(filePath: path))
    return (result.configuration, ["config \(path)"] + result.warnings.map(\.description))
}

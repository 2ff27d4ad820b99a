import FeatureGate
import FeatureGateConfig
import Foundation

/// The demo's config, or exit status 65 with why it cannot be used.
func readDemoConfigOrExit(
    at path: String
) -> (configuration: PrivacyConfiguration, policy: ConsentPolicy, notes: [String]) {
    do {
        return try readDemoConfig(at: path)
    } catch {
        FileHandle.standardError.write(Data("consent-demo: the config file cannot be used:\n\(error)\n".utf8))
        exit(65)
    }
}

/// Reads the demo's config file with FeatureGateConfig's strict reader (JSON or plist, format from the content).
///
/// A missing file means every feature disabled; any other problem is a `ConfigError` listing every diagnostic
/// with its key path, line, what was found and what was expected. It fails closed: never "all" by accident.
///
/// - Returns: The configuration, the file's consent policy (the default policy when it has none), and notes to
///   print (the source, and the reader's warnings).
func readDemoConfig(
    at path: String
) throws(ConfigError) -> (configuration: PrivacyConfiguration, policy: ConsentPolicy, notes: [String]) {
    guard FileManager.default.fileExists(atPath: path) else {
        return (
            PrivacyConfiguration(enabledFeatures: []), .default, ["\(path) not found: every feature starts disabled"]
        )
    }
    let result = try ConfigReader().read(contentsOf: URL(filePath: path))
    return (
        result.configuration, result.consentPolicy ?? .default,
        ["config \(path)"] + result.warnings.map(\.description)
    )
}

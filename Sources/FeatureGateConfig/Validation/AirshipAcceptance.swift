import Foundation

/// Whether an Airship app would accept a config: the values Airship's iOS SDK rejects, as errors.
///
/// ``ConfigReadingMode/airshipCompatible`` reads a file leniently, the way FeatureGate wants to load it (unknown
/// names dropped, a comma-separated string or a bitmask read). Airship itself is stricter, and how it fails
/// depends on the SDK version:
/// - SDK 19 and later decode `AirshipConfig.plist` with a `Decodable` config: `enabledFeatures` must be an array
///   of Airship's names (any letter case, no surrounding spaces), and anything else (an unknown or retired name, a
///   string, an integer) makes the decoding throw, so `takeOff` fails. So does a non-boolean analytics switch.
/// - SDK 16 to 18 copied the plist's values onto the config one by one and logged a value they could not read;
///   `enabledFeatures` then kept its default, every feature on. They read a comma-separated string, but without
///   trimming the spaces around each name.
///
/// Every SDK reads a file without the `enabledFeatures` key (a misspelled key included: the keys are case-sensitive)
/// as every feature enabled, its default.
///
/// So `featuregate check --airship` reports each of these as an error: no Airship app reads such a file as written.
package enum AirshipAcceptance {
    /// The names Airship's iOS SDK reads in `enabledFeatures`, lowercased.
    package static let names: Set<String> = [
        "push", "contacts", "message_center", "analytics", "tags_and_attributes", "in_app_automation",
        "feature_flags", "all", "none",
    ]

    /// What SDK 16 to 18 did with a value they could not read.
    private static let olderSDKs = "SDK 16 to 18 ignore the value and enable every feature"

    /// The errors Airship's iOS SDK would meet in `root`, in document order: the values it rejects, and a missing
    /// `enabledFeatures`, which it reads as every feature.
    package static func diagnostics(for root: ConfigNode, source: String) -> [ConfigDiagnostic] {
        guard case .dictionary(let entries) = root.value else { return [] }
        var diagnostics: [ConfigDiagnostic] = []
        func reject(_ keyPath: String, _ node: ConfigNode, expected: String, _ message: String) {
            diagnostics.append(
                ConfigDiagnostic(
                    severity: .error, kind: .rejectedByAirship, source: source, keyPath: keyPath, line: node.line,
                    column: node.line == nil ? nil : node.column, found: node.summary, expected: expected,
                    message: (node.line.map { "line \($0): " } ?? "") + message))
        }
        let key = ConfigValidator.enabledFeaturesKey
        let nameList = names.sorted().joined(separator: ", ")
        if !entries.contains(where: { $0.key == key }) {
            diagnostics.append(
                ConfigDiagnostic(
                    severity: .error, kind: .defaultedToAll, source: source, keyPath: key, found: nil,
                    expected: "an array of names", suggestion: nil,
                    message: "missing: Airship's iOS SDK (every version) then keeps its default and enables every "
                        + "feature; write the features to enable, [\"all\"] to keep that"))
        }
        if let entry = entries.first(where: { $0.key == key }) {
            switch entry.value.value {
            case .array(let elements):
                for (index, element) in elements.enumerated() {
                    guard case .string(let name) = element.value else {
                        reject(
                            "\(key)[\(index)]", element, expected: "a feature name (a string)",
                            "Airship iOS SDK 19 and later fail takeOff on \(element.summary) here: they read "
                                + "enabledFeatures as an array of names only; \(olderSDKs)")
                        continue
                    }
                    guard let problem = problem(with: name) else { continue }
                    reject(
                        "\(key)[\(index)]", element, expected: nameList,
                        "Airship iOS SDK 19 and later fail takeOff on \(quoted(name)) (\(problem)); \(olderSDKs)")
                }
            case .string(let list):
                // SDK 16 to 18 trimmed the whole string, split it at commas and read each piece as it was.
                let pieces = list.trimmingCharacters(in: .whitespaces).split(
                    separator: ",", omittingEmptySubsequences: false)
                let unread = pieces.first { !names.contains($0.lowercased()) }.map(String.init)
                let olderRead =
                    unread.map {
                        "SDK 16 to 18 split it at commas without trimming spaces, cannot read \(quoted($0)), and "
                            + "enable every feature"
                    } ?? "SDK 16 to 18 read it as comma-separated names"
                reject(
                    key, entry.value, expected: "an array of names",
                    "Airship iOS SDK 19 and later fail takeOff on a string here: they read enabledFeatures as an "
                        + "array of names only; \(olderRead). Write an array of names")
            default:
                var isInteger = false
                if case .integer = entry.value.value { isInteger = true }
                reject(
                    key, entry.value, expected: "an array of names",
                    "Airship iOS SDK 19 and later fail takeOff on \(entry.value.summary) here: they read "
                        + "enabledFeatures as an array of names only"
                        + (isInteger ? " (the integer bitmask is Airship Android's form)" : "") + "; \(olderSDKs)")
            }
        }
        for switchKey in ConfigValidator.analyticsSwitchKeys {
            guard let entry = entries.first(where: { $0.key == switchKey }) else { continue }
            switch entry.value.value {
            case .boolean: continue
            // An old-style plist has no booleans; Apple's readers take YES and NO there.
            case .string("YES"), .string("NO"): continue
            default:
                reject(
                    switchKey, entry.value, expected: "a boolean",
                    "Airship iOS SDK 19 and later fail takeOff on \(entry.value.summary) here: they read "
                        + "\(switchKey) as a boolean")
            }
        }
        return diagnostics
    }

    /// Why Airship does not read `name`, or `nil` when it does.
    private static func problem(with name: String) -> String? {
        if names.contains(name.lowercased()) { return nil }
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        if names.contains(trimmed) { return "Airship does not trim the spaces around a name" }
        if ConfigValidator.retiredNames.contains(trimmed) { return "Airship retired \(quoted(trimmed))" }
        let suggestion = NameMatching.closest(to: trimmed, among: names.sorted()).map {
            ", did you mean \(quoted($0))?"
        }
        return "not one of Airship's names\(suggestion ?? "")"
    }
}

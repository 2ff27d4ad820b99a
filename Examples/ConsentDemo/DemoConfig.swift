import FeatureGate
import Foundation

/// Reads the demo's config file: `{"enabledFeatures": ["analytics", ...]}`, or `"all"` / `"none"`.
///
/// TODO: switch to FeatureGateConfig's reader once it lands on main; this minimal parse stands in for it and
/// is kept to this one function. It fails closed: a file it cannot read exactly is an error, never "all".
func readDemoConfig(at path: String) throws -> (features: Feature, note: String) {
    guard FileManager.default.fileExists(atPath: path) else {
        return ([], "\(path) not found: every feature starts disabled")
    }
    let data = try Data(contentsOf: URL(filePath: path))
    guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
        throw DemoError("\(path): expected a JSON object at the top level")
    }
    let catalog = FeatureCatalog.builtIn
    func feature(_ name: String, at keyPath: String) throws -> Feature {
        switch name {
        case "all": return catalog.allFeatures
        case "none": return []
        default:
            guard let flag = catalog.feature(named: name) else {
                throw DemoError(
                    "\(path): \(keyPath): unknown feature \"\(name)\"; expected one of "
                        + (catalog.entries.map(\.name) + ["all", "none"]).joined(separator: ", ")
                )
            }
            return flag
        }
    }
    switch root["enabledFeatures"] {
    case nil:
        return ([], "\(path) has no enabledFeatures: every feature starts disabled")
    case let name as String:
        return (try feature(name, at: "enabledFeatures"), "config \(path)")
    case let names as [Any]:
        var features: Feature = []
        for (index, value) in names.enumerated() {
            guard let name = value as? String else {
                throw DemoError("\(path): enabledFeatures[\(index)]: found \(value), expected a feature name")
            }
            features.formUnion(try feature(name, at: "enabledFeatures[\(index)]"))
        }
        return (features, "config \(path)")
    case let other?:
        throw DemoError("\(path): enabledFeatures: found \(other), expected an array of feature names")
    }
}

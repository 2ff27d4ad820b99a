import FeatureGate
import FeatureGateConfig
import Foundation
import Testing

/// What reading one input gave: the configuration (or `nil`), the format, and every diagnostic as printed.
struct Outcome: Equatable, CustomStringConvertible {
    var features: Feature?
    var reset: Bool?
    var format: ConfigFormat?
    var lines: [String]

    var isValid: Bool { features != nil }
    var description: String { "\(features.map { "\($0)" } ?? "invalid") \(lines)" }
}

/// A catalog with one custom flag, `crash_reports` at bit 16.
let customCatalog = try! FeatureCatalog.builtIn.registering("crash_reports", as: .custom(bit: 16))
let crashReports = Feature.custom(bit: 16)

func outcome(
    _ data: Data,
    _ mode: ConfigReadingMode = .strict,
    catalog: FeatureCatalog = .builtIn,
    limits: ConfigLimits = .default,
    source: String = "c"
) -> Outcome {
    let reader = ConfigReader(mode: mode, catalog: catalog, limits: limits)
    do {
        let result = try reader.read(data, sourceName: source)
        #expect(result.source == source)
        return Outcome(
            features: result.configuration.enabledFeatures, reset: result.configuration.resetEnabledFeatures,
            format: result.format, lines: result.warnings.map(\.description))
    } catch {
        #expect(error.source == source)
        #expect(!error.errors.isEmpty)
        return Outcome(features: nil, reset: nil, format: error.format, lines: error.diagnostics.map(\.description))
    }
}

func outcome(
    _ text: String,
    _ mode: ConfigReadingMode = .strict,
    catalog: FeatureCatalog = .builtIn,
    limits: ConfigLimits = .default,
    source: String = "c"
) -> Outcome {
    outcome(Data(text.utf8), mode, catalog: catalog, limits: limits, source: source)
}

func outcome(_ bytes: [UInt8], _ mode: ConfigReadingMode = .strict, limits: ConfigLimits = .default) -> Outcome {
    outcome(Data(bytes), mode, limits: limits)
}

/// The `ConfigError` of an input that must fail.
func readError(
    _ data: Data,
    _ mode: ConfigReadingMode = .strict,
    catalog: FeatureCatalog = .builtIn,
    sourceLocation: SourceLocation = #_sourceLocation
) -> ConfigError? {
    do {
        let result = try ConfigReader(mode: mode, catalog: catalog).read(data, sourceName: "c")
        Issue.record("expected an error, read \(result.configuration.enabledFeatures)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// A JSON config with `enabledFeatures` set to `value` (JSON text), on line 1.
func json(enabled value: String) -> String { #"{"enabledFeatures": \#(value)}"# }

/// An XML plist whose `<dict>` holds `body`; the body starts on line 4.
func plist(_ body: String) -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <plist version="1.0">
    <dict>
    \(body)
    </dict>
    </plist>
    """
}

/// A binary plist written by Foundation, an encoder independent of the reader.
func binaryPlist(_ object: Any) -> Data {
    try! PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
}

/// An XML plist written by Foundation.
func xmlPlist(_ object: Any) -> Data {
    try! PropertyListSerialization.data(fromPropertyList: object, format: .xml, options: 0)
}

/// A fresh directory under the system's temporary directory, removed by `cleanUp()`.
struct TemporaryDirectory {
    let url: URL
    init() {
        url = URL(filePath: NSTemporaryDirectory()).appending(path: "featuregate-config-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    var path: String { url.path(percentEncoded: false) }
    func file(_ name: String, _ contents: Data) -> URL {
        let file = url.appending(path: name)
        try! contents.write(to: file)
        return file
    }
    func cleanUp() { try? FileManager.default.removeItem(at: url) }
}

/// A comparable rendering: dictionary keys sorted, numbers and dates by value, data by its bytes.
func canonical(_ node: ConfigNode) -> String {
    switch node.value {
    case .dictionary(let entries):
        "{" + entries.map { "\($0.key.debugDescription)=\(canonical($0.value))" }.sorted().joined(separator: ",")
            + "}"
    case .array(let elements): "[" + elements.map(canonical).joined(separator: ",") + "]"
    case .string(let text): "s\(text.debugDescription)"
    case .integer(let integer): "i\(integer.text)"
    case .real(let text): "r\(Double(text).map { "\($0)" } ?? text)"
    case .boolean(let flag): "b\(flag)"
    case .date(let text, let seconds): "d\((seconds ?? PlistDateText.seconds(fromISO: text)).map { "\($0)" } ?? text)"
    case .data(let bytes): "data\(bytes)"
    case .null: "null"
    case .other(let kind): kind
    }
}

import FeatureGate
import FeatureGateConfig
import Foundation

/// One fuzz input through the config reader, in every mode, with the invariants that must hold for any bytes.
///
/// A broken invariant is a `precondition` failure, which libFuzzer reports as a crash with the input saved.
package enum ConfigFuzz {
    static let catalog = try! FeatureCatalog.builtIn.registering("crash_reports", as: .custom(bit: 16))
    static let strict = ConfigReader(mode: .strict, catalog: catalog)
    static let lenient = ConfigReader(mode: .lenient, catalog: catalog)
    static let airship = ConfigReader(mode: .airshipCompatible, catalog: catalog)

    package static func run(_ data: Data) {
        let strictResult = read(data, with: strict)
        let lenientResult = read(data, with: lenient)
        let airshipResult = read(data, with: airship)

        // Each mode is at least as forgiving as the one before it, and agrees with it where both succeed.
        if let strictResult {
            precondition(lenientResult?.configuration == strictResult.configuration, "lenient disagrees with strict")
        }
        if let lenientResult {
            precondition(airshipResult?.configuration == lenientResult.configuration, "airship disagrees with lenient")
        }
    }

    private static func keys(of node: ConfigNode?) -> [String]? {
        guard case .dictionary(let entries) = node?.value else { return nil }
        return entries.map(\.key)
    }

    private static func read(_ data: Data, with reader: ConfigReader) -> ConfigReadResult? {
        let document: ConfigDocument
        do {
            document = try reader.readDocument(data, sourceName: "fuzz")
        } catch {
            precondition(!error.errors.isEmpty, "a ConfigError without errors")
            for diagnostic in error.diagnostics { precondition(!diagnostic.message.isEmpty, "an empty message") }
            return nil
        }
        let result = document.result
        // Never a flag outside the catalog.
        precondition(catalog.allFeatures.isSuperset(of: result.configuration.enabledFeatures), "unknown flag enabled")
        precondition(result.warnings.allSatisfy { $0.severity == .warning }, "an error in a valid result")
        // Whatever was read writes back and reads back to the same configuration, in every format.
        for format in ConfigFormat.allCases {
            let written = ConfigWriter.data(for: result.configuration, as: format, catalog: catalog)
            let again = try? strict.read(written)
            precondition(again?.configuration == result.configuration, "\(format) round trip changed the config")
            precondition(again?.format == format, "\(format) written but detected as another format")
            // The one warning a written config may carry: that a reset discards the user's choices.
            precondition(
                again?.warnings.allSatisfy { $0.kind == .resetDiscardsChoices } == true,
                "\(format) written with warnings")
        }
        // A conversion keeps every top-level key and the configuration, or refuses a value it cannot hold.
        for format in ConfigFormat.allCases {
            let converted = ConfigWriter.document(
                document.root, with: result.configuration, catalog: catalog, format: format)
            guard let bytes = try? ConfigDocumentWriter.data(for: converted, as: format) else { continue }
            let again = try? reader.readDocument(Data(bytes), sourceName: "fuzz")
            precondition(again?.result.configuration == result.configuration, "converting to \(format) changed it")
            precondition(again?.result.format == format, "converted to \(format), detected as another format")
            precondition(keys(of: again?.root) == keys(of: converted), "converting to \(format) lost a key")
        }
        return result
    }
}

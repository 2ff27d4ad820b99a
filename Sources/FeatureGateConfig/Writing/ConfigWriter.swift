import FeatureGate
import Foundation

/// Writes a configuration as a config file that ``ConfigReader`` reads back to the same configuration.
///
/// The output holds only `enabledFeatures`, as an array of names sorted alphabetically, and
/// `resetEnabledFeatures`. Features are written by name, never as `all` or a bitmask, so the file keeps meaning the
/// same flags when an SDK adds new ones. Bits outside the catalog are not written.
package enum ConfigWriter {
    /// The file contents for `configuration` in `format`.
    ///
    /// - Parameters:
    ///   - configuration: What to write.
    ///   - format: JSON, XML and old-style plists end with a line break; binary is a `bplist00` file. An old-style
    ///     plist has no booleans, so `resetEnabledFeatures` is written `YES` or `NO`, which the reader accepts there.
    ///     A `.properties` file (for Airship Android) starts with a comment and lists the names, or `none`.
    ///   - catalog: The names to write the flags under.
    package static func data(
        for configuration: PrivacyConfiguration,
        as format: ConfigFormat,
        catalog: FeatureCatalog = .builtIn
    ) -> Data {
        let root = ConfigNode(
            .dictionary([
                entry(ConfigValidator.enabledFeaturesKey, configuration, catalog: catalog, format: format),
                entry(ConfigValidator.resetEnabledFeaturesKey, configuration, catalog: catalog, format: format),
            ]))
        do {
            return Data(try ConfigDocumentWriter.data(for: root, as: format))
        } catch {
            // Names and a boolean (a string in an old-style plist) fit every format.
            preconditionFailure("a configuration cannot be written as \(format): \(error)")
        }
    }

    /// `root` with FeatureGate's two keys in their canonical form, every other key as it was.
    ///
    /// `enabledFeatures` becomes the sorted array of the names `configuration` enables and `resetEnabledFeatures` a
    /// boolean (`YES` or `NO` in an old-style plist), each where it was in the document, or added at the end.
    package static func document(
        _ root: ConfigNode, with configuration: PrivacyConfiguration, catalog: FeatureCatalog, format: ConfigFormat
    ) -> ConfigNode {
        guard case .dictionary(var entries) = root.value else { return root }
        for key in [ConfigValidator.enabledFeaturesKey, ConfigValidator.resetEnabledFeaturesKey] {
            let canonical = entry(key, configuration, catalog: catalog, format: format)
            if let position = entries.firstIndex(where: { $0.key == key }) {
                entries[position].value = canonical.value
            } else {
                entries.append(canonical)
            }
        }
        return ConfigNode(.dictionary(entries), line: root.line)
    }

    private static func entry(
        _ key: String, _ configuration: PrivacyConfiguration, catalog: FeatureCatalog, format: ConfigFormat
    ) -> ConfigNode.Entry {
        let value: ConfigNode.Value
        if key == ConfigValidator.enabledFeaturesKey {
            let names = catalog.names(of: catalog.mask(configuration.enabledFeatures)).sorted()
            value = .array(names.map { ConfigNode(.string($0)) })
        } else if format == .openStep {
            value = .string(configuration.resetEnabledFeatures ? "YES" : "NO")
        } else {
            value = .boolean(configuration.resetEnabledFeatures)
        }
        return ConfigNode.Entry(key: key, line: nil, value: ConfigNode(value))
    }

    /// A `bplist00` file around encoded `objects` (object 0 is the top): header, objects, offset table, trailer.
    ///
    /// Shared with the tests, which assemble malformed object graphs the reader must reject.
    package static func assembleBinaryPlist(_ objects: [[UInt8]], referenceSize: Int) -> [UInt8] {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let tableStart = bytes.count
        let offsetSize = tableStart < 256 ? 1 : tableStart < 65_536 ? 2 : 4
        for offset in offsets {
            for shift in stride(from: (offsetSize - 1) * 8, through: 0, by: -8) {
                bytes.append(UInt8((offset >> shift) & 0xFF))
            }
        }
        bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        for value in [objects.count, 0, tableStart] {
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((value >> shift) & 0xFF)) }
        }
        return bytes
    }
}

import FeatureGate
import Foundation

/// Writes a configuration as a config file that ``ConfigReader`` reads back to the same configuration.
///
/// The output holds only `enabledFeatures`, as an array of names sorted alphabetically, and
/// `resetEnabledFeatures`. Features are written by name, never as `all` or a bitmask, so the file keeps meaning the
/// same flags when an SDK adds new ones. Bits outside the catalog are not written.
public enum ConfigWriter {
    /// The file contents for `configuration` in `format`.
    ///
    /// - Parameters:
    ///   - configuration: What to write.
    ///   - format: JSON and XML end with a line break; binary is a `bplist00` file.
    ///   - catalog: The names to write the flags under.
    public static func data(
        for configuration: PrivacyConfiguration,
        as format: ConfigFormat,
        catalog: FeatureCatalog = .builtIn
    ) -> Data {
        let names = catalog.names(of: catalog.mask(configuration.enabledFeatures)).sorted()
        let reset = configuration.resetEnabledFeatures
        switch format {
        case .json:
            let list = names.isEmpty ? "[]" : "[\n" + names.map { "    \"\($0)\"" }.joined(separator: ",\n") + "\n  ]"
            return Data("{\n  \"enabledFeatures\": \(list),\n  \"resetEnabledFeatures\": \(reset)\n}\n".utf8)
        case .xml:
            let list =
                names.isEmpty
                ? "\t<array/>\n"
                : "\t<array>\n" + names.map { "\t\t<string>\($0)</string>\n" }.joined() + "\t</array>\n"
            return Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                \t<key>enabledFeatures</key>
                \(list)\t<key>resetEnabledFeatures</key>
                \t<\(reset)/>
                </dict>
                </plist>

                """.utf8)
        case .binary:
            return binaryPlist(names: names, reset: reset)
        }
    }

    /// A `bplist00` file for `{enabledFeatures: [names], resetEnabledFeatures: reset}`.
    ///
    /// Written by hand rather than with `PropertyListSerialization` so the bytes are the same on every platform.
    /// Objects: 0 the dictionary, 1–2 the keys, 3 the array, 4 the boolean, 5… the names.
    private static func binaryPlist(names: [String], reset: Bool) -> Data {
        var objects: [[UInt8]] = []
        let count = 5 + names.count
        let referenceSize = count < 256 ? 1 : 2
        func reference(_ index: Int) -> [UInt8] {
            referenceSize == 1 ? [UInt8(index)] : [UInt8(index >> 8), UInt8(index & 0xFF)]
        }
        func marker(_ type: UInt8, _ length: Int) -> [UInt8] {
            if length < 15 { return [type << 4 | UInt8(length)] }
            return [type << 4 | 0xF, 0x11, UInt8(length >> 8), UInt8(length & 0xFF)]
        }
        func ascii(_ text: String) -> [UInt8] { marker(0x5, text.utf8.count) + Array(text.utf8) }

        objects.append(marker(0xD, 2) + reference(1) + reference(2) + reference(3) + reference(4))
        objects.append(ascii("enabledFeatures"))
        objects.append(ascii("resetEnabledFeatures"))
        objects.append(marker(0xA, names.count) + (0..<names.count).flatMap { reference(5 + $0) })
        objects.append([reset ? 0x09 : 0x08])
        for name in names { objects.append(ascii(name)) }

        return Data(assembleBinaryPlist(objects, referenceSize: referenceSize))
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

import FeatureGate

/// Writes a document as a `.properties` file that `java.util.Properties` and ``PropertiesParser`` read back.
///
/// The format holds one line of text per key: a top-level dictionary of strings, plus `enabledFeatures` as names
/// (written `push, analytics`, or `none` for no name) and `resetEnabledFeatures` as a boolean (`true`/`false`).
/// Anything else (a number, a boolean or a container under another key, a date, data) is
/// ``ConfigDocumentWriter/Unrepresentable``, as a number is in an old-style plist. The file starts with a comment, so
/// its format is told from its content too, and is ASCII: other characters are written `\uXXXX` (UTF-16, as Java
/// reads them).
enum PropertiesWriter {
    static let header = "# FeatureGate config, read as Airship Android reads airshipconfig.properties\n"

    static func data(for root: ConfigNode) throws(ConfigDocumentWriter.Unrepresentable) -> [UInt8] {
        let path = KeyPathTracker()
        guard case .dictionary(let entries) = root.value else {
            throw unrepresentable(root, "a .properties file is a list of keys", path.current)
        }
        var text = header
        for entry in entries {
            let keyPath = path.appending(key: entry.key)
            let value: String
            switch (entry.key, entry.value.value) {
            case (_, .string(let string)):
                value = string
            case (ConfigValidator.enabledFeaturesKey, .array(let elements)):
                var names: [String] = []
                for (index, element) in elements.enumerated() {
                    guard case .string(let name) = element.value, !name.isEmpty,
                        !name.unicodeScalars.contains(where: { $0 == "," || $0 == " " })
                    else {
                        throw unrepresentable(
                            element, "enabledFeatures holds names without commas or spaces", "\(keyPath)[\(index)]")
                    }
                    names.append(name)
                }
                value = names.isEmpty ? "none" : names.joined(separator: ", ")
            case (ConfigValidator.resetEnabledFeaturesKey, .boolean(let flag)):
                value = flag ? "true" : "false"
            default:
                throw unrepresentable(entry.value, "a .properties file holds only text", keyPath)
            }
            text += escaped(entry.key, isKey: true) + " = " + escaped(value, isKey: false) + "\n"
        }
        return Array(text.utf8)
    }

    private static func unrepresentable(
        _ node: ConfigNode, _ reason: String, _ keyPath: String
    ) -> ConfigDocumentWriter.Unrepresentable {
        ConfigDocumentWriter.Unrepresentable(
            keyPath: keyPath, line: node.line, found: node.kindSummary, format: .properties, reason: reason)
    }

    /// `text` with what `java.util.Properties` would read otherwise escaped: backslashes, line breaks, tabs and form
    /// feeds; in a key, separators and a leading comment character; a leading blank in a value; everything outside
    /// printable ASCII as `\uXXXX`.
    private static func escaped(_ text: String, isKey: Bool) -> String {
        var result = ""
        for (offset, scalar) in text.unicodeScalars.enumerated() {
            switch scalar {
            case "\\": result += "\\\\"
            case "\t": result += "\\t"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\u{0C}": result += "\\f"
            case "=",
                ":" where isKey:
                result += "\\" + String(scalar)
            case " " where isKey || offset == 0: result += "\\ "
            case "#",
                "!" where offset == 0:
                result += "\\" + String(scalar)
            case " "..."~": result.unicodeScalars.append(scalar)
            default:
                for unit in String(scalar).utf16 { result += "\\u" + hex4(UInt32(unit)) }
            }
        }
        return result
    }
}

import FeatureGate
import Foundation

/// Writes a parsed document in any format, every value with its type, or says which value the format cannot hold.
///
/// JSON has no dates or data; plists have no null; an old-style plist has only strings, data, arrays and
/// dictionaries; XML cannot hold most control characters; a binary plist holds integers of at most 64 bits (and
/// unsigned ones up to 2^64 - 1). Nothing is ever converted to another type to make it fit: the caller gets
/// ``Unrepresentable`` with the key path, and writes nothing.
package enum ConfigDocumentWriter {
    /// A value `format` cannot hold.
    package struct Unrepresentable: Error, Sendable {
        /// Where the value is: `analyticsURL`, `list[2]`, `(root)`.
        package var keyPath: String
        package var line: Int?
        /// The value, as a message shows it: `date 2024-05-01T12:00:00Z`; a string by its length only, since it may
        /// be a secret (an app secret with a control character in it).
        package var found: String
        package var format: ConfigFormat
        /// Why, e.g. `JSON has no dates`.
        package var reason: String

        /// The failure as the error `featuregate convert` prints.
        package func diagnostic(source: String) -> ConfigDiagnostic {
            let name =
                switch format {
                case .json: "JSON"
                case .xml: "an XML plist"
                case .binary: "a binary plist"
                case .openStep: "an old-style plist"
                case .properties: "a .properties file"
                }
            return ConfigDiagnostic(
                severity: .error, kind: .unconvertibleValue, source: source, keyPath: keyPath, line: line,
                found: found, expected: "a value \(name) can hold",
                message: (line.map { "line \($0): " } ?? "")
                    + "cannot write \(found) as \(name): \(reason); nothing was written")
        }
    }

    /// The bytes of `root` in `format`; JSON, XML and old-style plists end with a line break.
    package static func data(for root: ConfigNode, as format: ConfigFormat) throws(Unrepresentable) -> [UInt8] {
        var path = KeyPathTracker()
        switch format {
        case .json:
            var text = ""
            try writeText(root, .json, indent: "", into: &text, path: &path)
            return Array((text + "\n").utf8)
        case .xml:
            var text = """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">

                """
            try writeXML(root, indent: "", into: &text, path: &path)
            return Array((text + "</plist>\n").utf8)
        case .openStep:
            var text = ""
            try writeText(root, .openStep, indent: "", into: &text, path: &path)
            return Array((text + "\n").utf8)
        case .binary:
            var writer = BinaryWriter()
            _ = try writer.add(root, path: &path)
            return writer.file()
        case .properties:
            return try PropertiesWriter.data(for: root)
        }
    }

    // MARK: - Paths and failures

    private static func unrepresentable(
        _ node: ConfigNode, _ format: ConfigFormat, _ reason: String, path: KeyPathTracker
    ) -> Unrepresentable {
        Unrepresentable(
            keyPath: path.current, line: node.line, found: node.kindSummary, format: format, reason: reason)
    }

    // MARK: - JSON and old-style plists

    /// What sets JSON and an old-style plist apart. Both write a non-empty container as its opening bracket, one
    /// member a line (indented one step further), and its closing bracket at the container's own indent.
    private struct TextSyntax: Sendable {
        /// One level of indentation.
        var indentStep: String
        /// An array's brackets (a dictionary's are `{` and `}` in both).
        var arrayBrackets: (open: String, close: String)
        /// A dictionary key as written before its value, with what separates them.
        var key: @Sendable (String) -> String
        /// What ends a dictionary entry's line, and an array element's (whether it is the container's last).
        var entryEnd: @Sendable (_ isLast: Bool) -> String
        var elementEnd: @Sendable (_ isLast: Bool) -> String
        /// A value that is not a container.
        var scalar: @Sendable (ConfigNode, KeyPathTracker) throws(Unrepresentable) -> String

        static let json = TextSyntax(
            indentStep: "  ", arrayBrackets: ("[", "]"), key: { jsonString($0) + ": " },
            entryEnd: { $0 ? "\n" : ",\n" }, elementEnd: { $0 ? "\n" : ",\n" }, scalar: jsonScalar)

        static let openStep = TextSyntax(
            indentStep: "\t", arrayBrackets: ("(", ")"), key: { openStepString($0) + " = " },
            entryEnd: { _ in ";\n" }, elementEnd: { _ in ",\n" }, scalar: openStepScalar)
    }

    private static func writeText(
        _ node: ConfigNode, _ syntax: TextSyntax, indent: String, into text: inout String, path: inout KeyPathTracker
    ) throws(Unrepresentable) {
        // A dictionary's members have keys, an array's do not.
        let members: [(key: String?, value: ConfigNode)]
        let brackets: (open: String, close: String)
        switch node.value {
        case .dictionary(let entries):
            members = entries.map { ($0.key, $0.value) }
            brackets = ("{", "}")
        case .array(let elements):
            members = elements.map { (nil, $0) }
            brackets = syntax.arrayBrackets
        default:
            return text += try syntax.scalar(node, path)
        }
        guard !members.isEmpty else { return text += brackets.open + brackets.close }
        let inner = indent + syntax.indentStep
        text += brackets.open + "\n"
        for (position, member) in members.enumerated() {
            text += inner
            if let key = member.key {
                text += syntax.key(key)
                path.push(key: key)
            } else {
                path.push(index: position)
            }
            try writeText(member.value, syntax, indent: inner, into: &text, path: &path)
            path.pop()
            let isLast = position == members.count - 1
            text += member.key == nil ? syntax.elementEnd(isLast) : syntax.entryEnd(isLast)
        }
        text += indent + brackets.close
    }

    /// A JSON value other than a container.
    private static func jsonScalar(_ node: ConfigNode, path: KeyPathTracker) throws(Unrepresentable) -> String {
        switch node.value {
        case .string(let string): return jsonString(string)
        case .integer(let integer): return integer.text
        case .real(let written):
            guard let value = Double(written), value.isFinite else {
                throw unrepresentable(node, .json, "JSON has no NaN or infinite numbers", path: path)
            }
            return isJSONNumber(written) ? written : "\(value)"
        case .boolean(let flag): return "\(flag)"
        case .null: return "null"
        case .date: throw unrepresentable(node, .json, "JSON has no dates", path: path)
        case .data: throw unrepresentable(node, .json, "JSON has no data", path: path)
        // Containers never come here: `writeText` writes them.
        case .other, .dictionary, .array: throw unrepresentable(node, .json, "JSON has no such value", path: path)
        }
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped, everything else as it is.
    package static func jsonString(_ string: String) -> String {
        var result = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                // Beyond what JSON requires, every character a terminal could act on (C1 controls, text-direction
                // overrides), so the text stays valid JSON after the console's escaping, which then finds nothing.
                if scalar.value < 0x20 || UntrustedText.needsEscaping(scalar) {
                    result += "\\u" + hex4(scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    /// Whether `text` is already a JSON number (an XML `<real>` may hold ` 1.5`, `.5` or `1.`, which are not).
    private static func isJSONNumber(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return (try? JSONConfigParser.parse(bytes, limits: .default)).map {
            if case .real = $0.value { true } else { false }
        } ?? false
    }

    // MARK: - XML

    private static func writeXML(
        _ node: ConfigNode, indent: String, into text: inout String, path: inout KeyPathTracker
    ) throws(Unrepresentable) {
        let inner = indent + "\t"
        switch node.value {
        case .dictionary(let entries):
            guard !entries.isEmpty else { return text += indent + "<dict/>\n" }
            text += indent + "<dict>\n"
            for entry in entries {
                path.push(key: entry.key)
                guard let key = xmlText(entry.key) else {
                    throw unrepresentable(
                        ConfigNode(.string(entry.key), line: entry.line), .xml,
                        "XML cannot hold the control characters in this key", path: path)
                }
                text += inner + "<key>\(key)</key>\n"
                try writeXML(entry.value, indent: inner, into: &text, path: &path)
                path.pop()
            }
            text += indent + "</dict>\n"
        case .array(let elements):
            guard !elements.isEmpty else { return text += indent + "<array/>\n" }
            text += indent + "<array>\n"
            for (position, element) in elements.enumerated() {
                path.push(index: position)
                try writeXML(element, indent: inner, into: &text, path: &path)
                path.pop()
            }
            text += indent + "</array>\n"
        case .string(let string):
            guard let escaped = xmlText(string) else {
                throw unrepresentable(
                    node, .xml, "XML cannot hold control characters other than tab and line breaks",
                    path: path)
            }
            text += indent + "<string>\(escaped)</string>\n"
        case .integer(let integer): text += indent + "<integer>\(integer.text)</integer>\n"
        case .real(let written):
            guard let value = Double(written) else {
                throw unrepresentable(node, .xml, "it is not a number", path: path)
            }
            text +=
                indent + "<real>\(value.isFinite ? written.trimmingCharacters(in: .whitespaces) : "\(value)")</real>\n"
        case .boolean(let flag): text += indent + (flag ? "<true/>\n" : "<false/>\n")
        case .date(let written, let seconds):
            guard let iso = isoDate(written, seconds: seconds) else {
                throw unrepresentable(node, .xml, "a plist date must fall in the years 1 to 9999", path: path)
            }
            text += indent + "<date>\(iso)</date>\n"
        case .data(let bytes): text += indent + "<data>\(Data(bytes).base64EncodedString())</data>\n"
        case .null: throw unrepresentable(node, .xml, "a plist has no null", path: path)
        case .other: throw unrepresentable(node, .xml, "an XML plist has no such value", path: path)
        }
    }

    /// Text for an XML element, or `nil` when it holds a character XML 1.0 cannot carry.
    private static func xmlText(_ string: String) -> String? {
        var result = ""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            // A carriage return as such would be read back as a line feed.
            case "\r": result += "&#13;"
            case "\t", "\n": result.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF { return nil }
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` for a date, from its seconds when known, or its text when that is already in form.
    private static func isoDate(_ written: String, seconds: Double?) -> String? {
        if let seconds {
            guard seconds >= PlistDateText.earliest, seconds < PlistDateText.end else { return nil }
            return PlistDateText.text(secondsSinceReferenceDate: seconds)
        }
        return PlistDateText.seconds(fromISO: written) == nil ? nil : written
    }

    // MARK: - Old-style plist

    /// An old-style plist value other than a container.
    private static func openStepScalar(_ node: ConfigNode, path: KeyPathTracker) throws(Unrepresentable) -> String {
        switch node.value {
        case .string(let string): return openStepString(string)
        case .data(let bytes):
            return "<" + bytes.map { ($0 < 0x10 ? "0" : "") + String($0, radix: 16) }.joined() + ">"
        default:
            throw unrepresentable(
                node, .openStep, "an old-style plist holds only strings, data, arrays and dictionaries", path: path)
        }
    }

    /// A string bare when it can be, quoted otherwise; every character outside printable ASCII as `\U` escapes.
    ///
    /// Bare only when no reader could take it for anything else: `//` or `/*` (anywhere, as a reader may split a
    /// bare string there) would start a comment, and the string would be lost.
    private static func openStepString(_ string: String) -> String {
        if !string.isEmpty && string.utf8.allSatisfy(isUnquotedStringByte) && !string.contains("//")
            && !string.contains("/*")
        {
            return string
        }
        var result = "\""
        for unit in string.utf16 {
            switch unit {
            case 0x22: result += "\\\""
            case 0x5C: result += "\\\\"
            case 0x0A: result += "\\n"
            case 0x09: result += "\\t"
            case 0x20..<0x7F: result.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default: result += "\\U" + hex4(UInt32(unit))
            }
        }
        return result + "\""
    }

    // MARK: - Binary

    /// Encodes objects depth first (each container before its children) into a `bplist00` file.
    private struct BinaryWriter {
        /// Encoded objects; a container's references are filled in once its children have numbers.
        private var objects: [[UInt8]] = []
        private var containers: [(index: Int, marker: [UInt8], references: [Int])] = []

        mutating func add(_ node: ConfigNode, path: inout KeyPathTracker) throws(Unrepresentable) -> Int {
            let index = objects.count
            objects.append([])
            switch node.value {
            case .dictionary(let entries):
                var keys: [Int] = []
                for entry in entries {
                    keys.append(objects.count)
                    objects.append(Self.string(entry.key))
                }
                var values: [Int] = []
                for entry in entries {
                    path.push(key: entry.key)
                    values.append(try add(entry.value, path: &path))
                    path.pop()
                }
                containers.append((index, Self.marker(0xD, entries.count), keys + values))
            case .array(let elements):
                var references: [Int] = []
                for (position, element) in elements.enumerated() {
                    path.push(index: position)
                    references.append(try add(element, path: &path))
                    path.pop()
                }
                containers.append((index, Self.marker(0xA, elements.count), references))
            case .string(let string): objects[index] = Self.string(string)
            case .integer(let integer):
                guard let encoded = Self.integer(integer) else {
                    throw unrepresentable(node, .binary, "a binary plist holds integers of at most 64 bits", path: path)
                }
                objects[index] = encoded
            case .real(let written):
                guard let value = Double(written) else {
                    throw unrepresentable(node, .binary, "it is not a number", path: path)
                }
                objects[index] = [0x23] + Self.bigEndian(value.bitPattern, size: 8)
            case .boolean(let flag): objects[index] = [flag ? 0x09 : 0x08]
            case .date(let written, let seconds):
                guard let value = seconds ?? PlistDateText.seconds(fromISO: written) else {
                    throw unrepresentable(node, .binary, "the date is not in the form 2024-05-01T12:00:00Z", path: path)
                }
                objects[index] = [0x33] + Self.bigEndian(value.bitPattern, size: 8)
            case .data(let bytes): objects[index] = Self.marker(0x4, bytes.count) + bytes
            case .null: throw unrepresentable(node, .binary, "a plist has no null", path: path)
            case .other:
                throw unrepresentable(node, .binary, "a binary plist written here has no such value", path: path)
            }
            return index
        }

        /// The whole file: containers get their references, sized for the object count.
        func file() -> [UInt8] {
            let referenceSize = objects.count < 256 ? 1 : objects.count < 65_536 ? 2 : 4
            var encoded = objects
            for container in containers {
                encoded[container.index] =
                    container.marker + container.references.flatMap { Self.bigEndian(UInt64($0), size: referenceSize) }
            }
            return ConfigWriter.assembleBinaryPlist(encoded, referenceSize: referenceSize)
        }

        private static func string(_ string: String) -> [UInt8] {
            if string.utf8.allSatisfy({ $0 < 0x80 }) { return marker(0x5, string.utf8.count) + Array(string.utf8) }
            let units = Array(string.utf16)
            return marker(0x6, units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        }

        private static func integer(_ integer: ConfigInteger) -> [UInt8]? {
            guard let magnitude = integer.magnitude else { return nil }
            if integer.isNegative {
                guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
                return [0x13] + bigEndian(UInt64(bitPattern: 0 &- Int64(bitPattern: magnitude)), size: 8)
            }
            switch magnitude {
            case 0...0xFF: return [0x10] + bigEndian(magnitude, size: 1)
            case 0...0xFFFF: return [0x11] + bigEndian(magnitude, size: 2)
            case 0...0xFFFF_FFFF: return [0x12] + bigEndian(magnitude, size: 4)
            case 0...UInt64(Int64.max): return [0x13] + bigEndian(magnitude, size: 8)
            // Above Int64.max, Apple writes a 16-byte integer whose high half is zero.
            default: return [0x14] + [UInt8](repeating: 0, count: 8) + bigEndian(magnitude, size: 8)
            }
        }

        /// A marker with `count` in its low nibble, or 0xF and an integer after it for 15 and up.
        private static func marker(_ type: UInt8, _ count: Int) -> [UInt8] {
            if count < 15 { return [type << 4 | UInt8(count)] }
            let size = count < 256 ? 0 : count < 65_536 ? 1 : 2
            return [type << 4 | 0xF, 0x10 | UInt8(size)] + bigEndian(UInt64(count), size: 1 << size)
        }

        private static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
            (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> UInt64(8 * $0)) }
        }
    }
}

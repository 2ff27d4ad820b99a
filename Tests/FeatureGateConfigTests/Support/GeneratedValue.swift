import Foundation
import PackageTestSupport

/// A property-list value built by the property tests, and its encodings, written independently of the reader.
indirect enum GeneratedValue {
    case string(String)
    case integer(Int64)
    case unsignedInteger(UInt64)
    case real(Double)
    case boolean(Bool)
    case date(Double)
    case data([UInt8])
    case array([GeneratedValue])
    case dictionary([(String, GeneratedValue)])

    /// JSON text; strings escape a random share of their characters as `\u` escapes.
    func json(using generator: inout SeededGenerator) -> String {
        switch self {
        case .string(let text): return jsonString(text, using: &generator)
        case .integer(let value): return "\(value)"
        case .unsignedInteger(let value): return "\(value)"
        case .real(let value): return "\(value)"
        case .boolean(let value): return "\(value)"
        case .date, .data: return "null"
        case .array(let elements):
            return "[" + elements.map { $0.json(using: &generator) }.joined(separator: ", ") + "]"
        case .dictionary(let entries):
            return "{\n"
                + entries.map { "\(jsonString($0.0, using: &generator)): \($0.1.json(using: &generator))" }
                .joined(separator: ",\n") + "\n}"
        }
    }

    /// The body of an XML plist value.
    var xml: String {
        switch self {
        case .string(let text): return "<string>\(xmlEscaped(text))</string>"
        case .integer(let value): return "<integer>\(value)</integer>"
        case .unsignedInteger(let value): return "<integer>\(value)</integer>"
        case .real(let value): return "<real>\(value)</real>"
        case .boolean(let value): return value ? "<true/>" : "<false/>"
        case .date: return "<date>2001-01-01T00:00:00Z</date>"
        case .data(let bytes): return "<data>\(Data(bytes).base64EncodedString())</data>"
        case .array(let elements): return "<array>\n" + elements.map(\.xml).joined(separator: "\n") + "\n</array>"
        case .dictionary(let entries):
            return "<dict>\n" + entries.map { "<key>\(xmlEscaped($0.0))</key>\n\($0.1.xml)" }.joined(separator: "\n")
                + "\n</dict>"
        }
    }

    /// A whole XML plist document.
    var xmlDocument: String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n\(xml)\n</plist>\n"
    }

    /// The Foundation object, for PropertyListSerialization and JSONSerialization.
    var object: Any {
        switch self {
        case .string(let text): return text
        case .integer(let value): return value
        case .unsignedInteger(let value): return value
        case .real(let value): return value
        case .boolean(let value): return value
        case .date(let seconds): return Date(timeIntervalSinceReferenceDate: seconds)
        case .data(let bytes): return Data(bytes)
        case .array(let elements): return elements.map(\.object)
        case .dictionary(let entries):
            var dictionary: [String: Any] = [:]
            for (key, value) in entries { dictionary[key] = value.object }
            return dictionary
        }
    }

    private func jsonString(_ text: String, using generator: inout SeededGenerator) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20
                    || Bool.random(using: &generator) && Int.random(in: 0..<4, using: &generator) == 0
                {
                    for unit in String(scalar).utf16 {
                        let hex = String(unit, radix: 16)
                        result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    }
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    private func xmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}

extension SeededGenerator {
    /// One of `elements`.
    mutating func pick<T>(_ elements: [T]) -> T { elements[Int.random(in: 0..<elements.count, using: &self)] }

    /// True with probability `percent`/100.
    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &self) < percent }

    /// A short string from a mix of ASCII, markup characters and non-ASCII.
    mutating func junk(maxLength: Int = 8) -> String {
        let pieces: [String] = [
            "a", "b", "z", "Q", "_", "-", " ", "1", "9", "é", "ß", "😀", "中", "<", ">", "&", "\"", "'", "\\", "/",
            "\t", "\n", ",",
        ]
        return (0..<Int.random(in: 0...maxLength, using: &self)).map { _ in pick(pieces) }.joined()
    }

    /// Any property-list value, nested at most `depth` levels.
    mutating func value(depth: Int) -> GeneratedValue {
        switch Int.random(in: 0..<(depth > 0 ? 9 : 7), using: &self) {
        case 0: return .string(junk(maxLength: 12))
        case 1: return .integer(Int64.random(in: .min ... .max, using: &self))
        case 2:
            return chance(50)
                ? .unsignedInteger(UInt64.random(in: 0 ... .max, using: &self))
                : .integer(Int64.random(in: -5...500, using: &self))
        case 3: return .real(Double.random(in: -1e9...1e9, using: &self))
        case 4: return .boolean(chance(50))
        case 5: return .date(Double(Int.random(in: -1_000_000_000...1_000_000_000, using: &self)))
        case 6:
            return .data(
                (0..<Int.random(in: 0...12, using: &self)).map { _ in UInt8.random(in: 0...255, using: &self) })
        case 7: return .array((0..<Int.random(in: 0...4, using: &self)).map { _ in value(depth: depth - 1) })
        default:
            var keys: Set<String> = []
            var entries: [(String, GeneratedValue)] = []
            for _ in 0..<Int.random(in: 0...4, using: &self) {
                let key = junk(maxLength: 6)
                if keys.insert(key).inserted { entries.append((key, value(depth: depth - 1))) }
            }
            return .dictionary(entries)
        }
    }
}

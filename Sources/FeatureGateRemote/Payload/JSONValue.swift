import Foundation

/// A decoded JSON value, as the payload parser walks it.
///
/// Decoded with `JSONDecoder`, which tells `true` from `1` (a number is never read as a boolean, nor the other way
/// round) and limits nesting depth. A key given twice in one object keeps one of its values: the parser cannot tell.
enum JSONValue: Sendable, Hashable, Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// What an error message says was found, e.g. `a number (3)`, `a string "x"`, `an object`.
    var summary: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .number(let value):
            let text = value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
            return "a number (\(text))"
        case .string(let value):
            let shown = value.count > 40 ? String(value.prefix(40)) + "…" : value
            return "a string \"\(shown)\""
        case .array(let items): return items.isEmpty ? "an empty array" : "an array"
        case .object: return "an object"
        }
    }

    var isNull: Bool { self == .null }
}

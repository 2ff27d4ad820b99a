import Foundation

/// A JSON document read into plain values, the way `JSONDecoder` reads it: whitespace and a UTF-8 byte-order mark
/// around the value and a comma before a closing bracket tolerated, the first of duplicate keys kept, an integer
/// accepted in any form that is exactly one (`1.0`, `1e2`), at most 512 levels deep.
///
/// For the package's own small records read at every launch (the gate state, the ledger's checkpoint): there, a
/// `JSONDecoder` and its containers made about 270 of a launch's 770 allocations and a specialized decoder per record
/// type (issue 47). The values are read by the record's own code, which refuses a missing field or one of another type
/// as the decoder did.
package enum JSONValue: Sendable {
    case null
    case bool(Bool)
    /// A number, as written (validated JSON number syntax).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Reads `data`: one JSON value and nothing after it but whitespace; `nil` for anything else.
    package init?(parsing data: Data) {
        var bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        var cursor = TextCursor(bytes, budget: NestingBudget(maximumDepth: Self.maximumDepth))
        guard let value = Self.value(&cursor, depth: 0) else { return nil }
        cursor.skipWhitespace()
        guard cursor.peek == nil else { return nil }
        self = value
    }

    private static let maximumDepth = 512
    /// The room a non-empty object or array starts with: the package's records have at most this many fields.
    private static let initialCapacity = 8

    private static func value(_ cursor: inout TextCursor, depth: Int) -> JSONValue? {
        cursor.skipWhitespace()
        guard let byte = cursor.peek, depth < maximumDepth else { return nil }
        switch byte {
        case UInt8(ascii: "{"):
            cursor.advance(by: 1)
            var fields: [String: JSONValue] = [:]
            while true {
                cursor.skipWhitespace()
                if cursor.peek == UInt8(ascii: "}") {
                    cursor.advance(by: 1)
                    return .object(fields)
                }
                guard cursor.peek == UInt8(ascii: "\""), let key = try? cursor.readJSONString() else { return nil }
                cursor.skipWhitespace()
                guard cursor.peek == UInt8(ascii: ":") else { return nil }
                cursor.advance(by: 1)
                guard let field = value(&cursor, depth: depth + 1) else { return nil }
                // Room for a record's fields at once, not grown one by one (a launch reads two such records).
                if fields.isEmpty { fields.reserveCapacity(initialCapacity) }
                if fields[key] == nil { fields[key] = field }
                guard separator(&cursor, closing: UInt8(ascii: "}")) else { return nil }
            }
        case UInt8(ascii: "["):
            cursor.advance(by: 1)
            var elements: [JSONValue] = []
            while true {
                cursor.skipWhitespace()
                if cursor.peek == UInt8(ascii: "]") {
                    cursor.advance(by: 1)
                    return .array(elements)
                }
                guard let element = value(&cursor, depth: depth + 1) else { return nil }
                if elements.isEmpty { elements.reserveCapacity(initialCapacity) }
                elements.append(element)
                guard separator(&cursor, closing: UInt8(ascii: "]")) else { return nil }
            }
        case UInt8(ascii: "\""):
            return (try? cursor.readJSONString()).map(JSONValue.string)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let start = cursor.index
            guard (try? cursor.scanJSONNumber()) != nil else { return nil }
            return .number(cursor.text(from: start))
        case UInt8(ascii: "t"): return literal(&cursor, "true", .bool(true))
        case UInt8(ascii: "f"): return literal(&cursor, "false", .bool(false))
        case UInt8(ascii: "n"): return literal(&cursor, "null", .null)
        default: return nil
        }
    }

    private static func literal(_ cursor: inout TextCursor, _ text: StaticString, _ value: JSONValue) -> JSONValue? {
        guard cursor.startsWith(text) else { return nil }
        cursor.advance(by: text.utf8CodeUnitCount)
        return value
    }

    /// Steps over the `,` after a member or an element, or stops before `closing`: whether either came.
    private static func separator(_ cursor: inout TextCursor, closing: UInt8) -> Bool {
        cursor.skipWhitespace()
        if cursor.peek == UInt8(ascii: ",") {
            cursor.advance(by: 1)
            return true
        }
        return cursor.peek == closing
    }

    /// The object's field `key`, or `nil` when this is not an object or has no such field.
    package subscript(key: String) -> JSONValue? {
        guard case .object(let fields) = self else { return nil }
        return fields[key]
    }

    /// The value as a `Bool`: `nil` for anything but `true` or `false`.
    package var bool: Bool? { if case .bool(let value) = self { value } else { nil } }

    /// The value as a string: `nil` for anything but a string.
    package var string: String? { if case .string(let value) = self { value } else { nil } }

    /// The value as an array: `nil` for anything but an array.
    package var array: [JSONValue]? { if case .array(let value) = self { value } else { nil } }

    /// The number as a finite `Double`: `nil` for anything else.
    package var double: Double? {
        guard case .number(let text) = self, let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// The number as an integer of type `T`, when it is exactly one in `T`'s range (`1.0` and `1e2` are).
    package func integer<T: FixedWidthInteger>(_: T.Type = T.self) -> T? {
        guard case .number(let text) = self else { return nil }
        if let value = T(text) { return value }
        return Double(text).flatMap { T(exactly: $0) }
    }

    /// An optional field: `.some(nil)` when `key` is absent or `null`, `nil` when it holds what `read` refuses (or
    /// this is not an object).
    package func optional<T>(_ key: String, _ read: (JSONValue) -> T?) -> T?? {
        guard case .object(let fields) = self else { return nil }
        guard let field = fields[key] else { return .some(nil) }
        if case .null = field { return .some(nil) }
        return read(field).map { .some($0) }
    }
}

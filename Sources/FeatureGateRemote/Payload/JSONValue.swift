import FeatureGate

/// A parsed JSON value, as the payload parser walks it.
enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

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

/// A strict RFC 8259 reader for payloads: UTF-8 only, nesting at most ``maximumDepth`` deep, and a key given twice in
/// one object is an error (which of the two a server meant is a guess).
///
/// Not `JSONDecoder`: it cannot report a duplicate key, and decoding an untyped value through it costs a thrown
/// error per type tried.
struct JSONReader {
    /// How deep arrays and objects may nest.
    static let maximumDepth = 64

    /// Where and why the text is not JSON.
    struct SyntaxError: Error {
        var offset: Int
        var message: String
    }

    private var cursor: TextCursor

    private init(_ bytes: [UInt8]) {
        cursor = TextCursor(bytes, budget: NestingBudget(maximumDepth: Self.maximumDepth))
    }

    /// Parses one value filling all of `bytes` (after an optional UTF-8 byte order mark).
    static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> JSONValue {
        guard isValidUTF8(bytes) else {
            throw SyntaxError(offset: 0, message: "not UTF-8")
        }
        var reader = JSONReader(bytes)
        let value = try reader.value(depth: 0)
        reader.cursor.skipWhitespace()
        guard reader.cursor.peek == nil else { throw reader.error("text after the value") }
        return value
    }

    /// An error at the cursor, or `skipping` bytes after it.
    private func error(_ message: String, skipping: Int = 0) -> SyntaxError {
        SyntaxError(offset: cursor.index + skipping, message: message)
    }

    private mutating func expect(_ byte: UInt8) throws(SyntaxError) {
        guard cursor.peek == byte else { throw error("expected '\(Character(Unicode.Scalar(byte)))'") }
        cursor.advance(by: 1)
    }

    private mutating func value(depth: Int) throws(SyntaxError) -> JSONValue {
        cursor.skipWhitespace()
        guard let byte = cursor.peek else { throw error("unexpected end") }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard cursor.budget.allows(depth: depth + 1) else { throw error("nested deeper than \(Self.maximumDepth)") }
            return byte == UInt8(ascii: "{") ? try object(depth: depth + 1) : try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw error("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) throws(SyntaxError) -> JSONValue {
        let matched = cursor.matchingLength(word)
        cursor.advance(by: matched)
        guard matched == word.utf8CodeUnitCount else {
            throw error("expected '\(Character(Unicode.Scalar(word.withUTF8Buffer { $0[matched] })))'")
        }
        return value
    }

    private mutating func object(depth: Int) throws(SyntaxError) -> JSONValue {
        cursor.advance(by: 1)
        var members: [String: JSONValue] = [:]
        cursor.skipWhitespace()
        if cursor.peek == UInt8(ascii: "}") {
            cursor.advance(by: 1)
            return .object(members)
        }
        while true {
            cursor.skipWhitespace()
            let keyOffset = cursor.index
            guard cursor.peek == UInt8(ascii: "\"") else { throw error("expected a key string") }
            let key = try string()
            cursor.skipWhitespace()
            try expect(UInt8(ascii: ":"))
            let member = try value(depth: depth)
            guard members.updateValue(member, forKey: key) == nil else {
                throw SyntaxError(offset: keyOffset, message: "the key \"\(key)\" is given twice")
            }
            if try endOfContainer(closedBy: UInt8(ascii: "}")) { return .object(members) }
        }
    }

    private mutating func array(depth: Int) throws(SyntaxError) -> JSONValue {
        cursor.advance(by: 1)
        var items: [JSONValue] = []
        cursor.skipWhitespace()
        if cursor.peek == UInt8(ascii: "]") {
            cursor.advance(by: 1)
            return .array(items)
        }
        while true {
            items.append(try value(depth: depth))
            if try endOfContainer(closedBy: UInt8(ascii: "]")) { return .array(items) }
        }
    }

    /// After a value in a container: steps over a `,` and says `false`, or over the `closer` and says `true`.
    private mutating func endOfContainer(closedBy closer: UInt8) throws(SyntaxError) -> Bool {
        cursor.skipWhitespace()
        if cursor.peek == UInt8(ascii: ",") {
            cursor.advance(by: 1)
            return false
        }
        try expect(closer)
        return true
    }

    private mutating func string() throws(SyntaxError) -> String {
        do throws(TextStringError) {
            return try cursor.readJSONString()
        } catch {
            switch error {
            case .unterminatedString: throw self.error("unterminated string")
            case .unterminatedEscape: throw self.error("unterminated escape")
            case .controlCharacter: throw self.error("control character in a string", skipping: 1)
            case .unknownEscape, .octalAboveASCII: throw self.error("unknown escape", skipping: 1)
            case .missingHexDigits: throw self.error("bad \\u escape")
            case .unpairedHighSurrogate where cursor.peek == UInt8(ascii: "\\"):
                // A backslash, but not `\u`.
                throw self.error("expected 'u'", skipping: 1)
            case .unpairedHighSurrogate, .notLowSurrogate, .unpairedLowSurrogate:
                throw self.error("unpaired surrogate")
            }
        }
    }

    private mutating func number() throws(SyntaxError) -> Double {
        let start = cursor.index
        do throws(JSONNumberPart) {
            _ = try cursor.scanJSONNumber()
        } catch {
            throw self.error("bad number")
        }
        guard let value = Double(cursor.text(from: start)), value.isFinite else {
            throw error("a number beyond the range of a double")
        }
        return value
    }
}

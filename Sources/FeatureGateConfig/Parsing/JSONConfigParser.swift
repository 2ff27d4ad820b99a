import FeatureGate

/// A strict RFC 8259 JSON parser that remembers the line and column of every value and enforces the reader's limits.
///
/// Foundation's `JSONSerialization` was not used: its errors give a character offset at best, it cannot tell
/// `1` from `1.0` from `true` on every platform, and it has no depth limit. The input has been checked to be
/// UTF-8 before this runs.
package struct JSONConfigParser {
    private var cursor: TextCursor
    private var columns = CharacterColumns()

    /// Parses one JSON value that fills the whole input (after an optional byte order mark).
    package static func parse(_ bytes: [UInt8], limits: ConfigLimits) throws(ParseFailure) -> ConfigNode {
        var parser = JSONConfigParser(cursor: TextCursor(bytes, limits: limits))
        parser.cursor.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.cursor.skipWhitespace()
        if let extra = parser.cursor.peek {
            throw parser.cursor.failure(
                "found \(describeByte(extra)) after the end of the top-level value", expected: "the end of the file")
        }
        return value
    }

    // MARK: - Values

    private mutating func parseValue(depth: Int) throws(ParseFailure) -> ConfigNode {
        let (line, column) = try cursor.countValue(&columns)
        switch cursor.peek ?? 0 {
        case UInt8(ascii: "{"):
            try cursor.budget.checkDepth(depth + 1, line: line, column: column)
            return ConfigNode(try parseObject(depth: depth + 1), line: line, column: column)
        case UInt8(ascii: "["):
            try cursor.budget.checkDepth(depth + 1, line: line, column: column)
            return ConfigNode(try parseArray(depth: depth + 1), line: line, column: column)
        case UInt8(ascii: "\""):
            return ConfigNode(.string(try parseString()), line: line, column: column)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return ConfigNode(try parseNumber(), line: line, column: column)
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return ConfigNode(.boolean(true), line: line, column: column)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return ConfigNode(.boolean(false), line: line, column: column)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return ConfigNode(.null, line: line, column: column)
        default:
            throw notAValue()
        }
    }

    private func notAValue() -> ParseFailure {
        cursor.failure(
            "expected a value, found \(describeByte(cursor.peek))",
            expected: "an object, array, string, number, true, false or null")
    }

    private mutating func parseObject(depth: Int) throws(ParseFailure) -> ConfigNode.Value {
        cursor.advance(by: 1)  // {
        var entries: [ConfigNode.Entry] = []
        cursor.skipWhitespace()
        if cursor.peek == UInt8(ascii: "}") {
            cursor.advance(by: 1)
            return .dictionary(entries)
        }
        while true {
            guard cursor.peek == UInt8(ascii: "\"") else {
                let trailing = cursor.peek == UInt8(ascii: "}") ? " (JSON allows no comma before '}')" : ""
                throw cursor.failure(
                    "expected a key in double quotes, found \(describeByte(cursor.peek))\(trailing)")
            }
            let keyLine = cursor.line
            let keyColumn = columns.column(of: cursor)
            let key = try parseString()
            cursor.skipWhitespace()
            if cursor.isAtEnd(ofValueBefore: ",", or: "}") {
                throw keyWithoutValue(key, line: keyLine, column: keyColumn)
            }
            guard cursor.peek == UInt8(ascii: ":") else {
                throw cursor.failure(
                    "expected ':' after the key \(quoted(key)), found \(describeByte(cursor.peek))")
            }
            cursor.advance(by: 1)
            cursor.skipWhitespace()
            if cursor.isAtEnd(ofValueBefore: ",", or: "}") {
                throw keyWithoutValue(key, line: keyLine, column: keyColumn)
            }
            cursor.path.push(key: key)
            let value = try parseValue(depth: depth)
            cursor.path.pop()
            entries.append(ConfigNode.Entry(key: key, line: keyLine, column: keyColumn, value: value))
            if try endOfContainer(closedBy: "}", in: "an object") { return .dictionary(entries) }
        }
    }

    private func keyWithoutValue(_ key: String, line: Int, column: Int) -> ParseFailure {
        cursor.keyWithoutValue(key, line: line, column: column, expected: "\"\(key)\": value")
    }

    private mutating func parseArray(depth: Int) throws(ParseFailure) -> ConfigNode.Value {
        cursor.advance(by: 1)  // [
        var elements: [ConfigNode] = []
        cursor.skipWhitespace()
        if cursor.peek == UInt8(ascii: "]") {
            cursor.advance(by: 1)
            return .array(elements)
        }
        while true {
            if cursor.peek == UInt8(ascii: "]") {
                throw cursor.failure("expected a value, found ']' (JSON allows no comma before ']')")
            }
            cursor.path.push(index: elements.count)
            elements.append(try parseValue(depth: depth))
            cursor.path.pop()
            if try endOfContainer(closedBy: "]", in: "an array") { return .array(elements) }
        }
    }

    /// After a value in a container: steps over a `,` and says `false`, or over the `closer` and says `true`.
    private mutating func endOfContainer(
        closedBy closer: Unicode.Scalar, in container: String
    ) throws(ParseFailure)
        -> Bool
    {
        cursor.skipWhitespace()
        switch cursor.peek {
        case UInt8(ascii: ","):
            cursor.advance(by: 1)
            cursor.skipWhitespace()
            return false
        case UInt8(ascii: closer):
            cursor.advance(by: 1)
            return true
        default:
            throw cursor.failure(
                "expected ',' or '\(closer)' after a value in \(container), found \(describeByte(cursor.peek))")
        }
    }

    private mutating func parseString() throws(ParseFailure) -> String {
        do throws(TextStringError) {
            return try cursor.readJSONString()
        } catch {
            throw cursor.failure(error, in: .json)
        }
    }

    private mutating func parseNumber() throws(ParseFailure) -> ConfigNode.Value {
        let start = cursor.index
        let isInteger: Bool
        do throws(JSONNumberPart) {
            isInteger = try cursor.scanJSONNumber()
        } catch {
            let after =
                switch error {
                case .integer: "after '-'"
                case .fraction: "after '.'"
                case .exponent: "in the exponent"
                }
            throw cursor.failure("expected a digit \(after), found \(describeByte(cursor.peek))")
        }
        if let next = cursor.peek, TextCursor.isDigit(next) {
            throw cursor.failure(
                "a number starts with 0 followed by more digits; JSON does not allow leading zeros")
        }
        let text = cursor.text(from: start)
        if isInteger, let integer = ConfigInteger(decimal: Substring(text)) {
            return .integer(integer)
        }
        return .real(text)
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(ParseFailure) {
        guard cursor.startsWith(literal) else { throw notAValue() }
        cursor.advance(by: literal.utf8CodeUnitCount)
    }
}

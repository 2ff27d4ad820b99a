import FeatureGate

/// A parser for old-style ASCII property lists (the OpenStep text format) that gives the line and column of every
/// error and enforces the reader's limits.
///
/// It reads what Apple's reader reads: dictionaries `{ key = value; }`, arrays `( a, b, )` (a trailing comma is
/// allowed), data `<0fbd 7778>`, strings in double or single quotes with C escapes, `\U` followed by up to four hex
/// digits and octal escapes, and unquoted strings of letters, digits and `_$+/:.-`. Comments are `// …` and
/// `/* … */`. There are no numbers, booleans or dates: `YES`, `NO` and `42` are strings, as they are for Apple. A
/// file may also be a dictionary's contents without the braces (the `.strings` form). One thing Apple accepts is an
/// error here: a key without a value (`{ key; }`, which Apple reads as `key = key`) is reported with the key and its
/// line, because for a config it is always a mistake. The input has been checked to be UTF-8.
package struct OpenStepPlistParser {
    private var cursor: TextCursor
    private var columns = CharacterColumns()

    /// Parses a whole old-style plist.
    package static func parse(_ bytes: [UInt8], limits: ConfigLimits) throws(ParseFailure) -> ConfigNode {
        var parser = OpenStepPlistParser(cursor: TextCursor(bytes, limits: limits))
        try parser.skipSpace()
        guard parser.cursor.peek != nil else {
            throw parser.cursor.failure("the document holds no value", expected: "{ … }")
        }
        let value = try parser.parseValue(depth: 0)
        try parser.skipSpace()
        if parser.cursor.peek == nil { return value }
        // `"key" = value;` at the top: the contents of a dictionary without the braces, as in a .strings file.
        guard case .string = value.value, parser.cursor.peek == UInt8(ascii: "=") else {
            throw parser.cursor.failure(
                "found \(describeByte(parser.cursor.peek)) after the end of the top-level value",
                expected: "the end of the file")
        }
        parser = OpenStepPlistParser(cursor: TextCursor(bytes, limits: limits))
        try parser.cursor.budget.countValue(line: 1, column: 1)
        return ConfigNode(try parser.parseDictionary(depth: 1, braceLine: nil), line: 1, column: 1)
    }

    // MARK: - Values

    private mutating func parseValue(depth: Int) throws(ParseFailure) -> ConfigNode {
        let (line, column) = try cursor.countValue(&columns)
        switch cursor.peek ?? 0 {
        case UInt8(ascii: "{"):
            try cursor.budget.checkDepth(depth + 1, line: line, column: column)
            cursor.advance()
            return ConfigNode(try parseDictionary(depth: depth + 1, braceLine: line), line: line, column: column)
        case UInt8(ascii: "("):
            try cursor.budget.checkDepth(depth + 1, line: line, column: column)
            cursor.advance()
            return ConfigNode(try parseArray(depth: depth + 1, parenthesisLine: line), line: line, column: column)
        case UInt8(ascii: "<"):
            return ConfigNode(.data(try parseData()), line: line, column: column)
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return ConfigNode(.string(try parseQuotedString()), line: line, column: column)
        case let byte where isUnquotedStringByte(byte):
            return ConfigNode(.string(parseUnquotedString()), line: line, column: column)
        default:
            throw cursor.failure(
                "expected a value, found \(describeByte(cursor.peek))",
                expected: "a string, \"quoted string\", <hex data>, ( array ) or { dictionary }")
        }
    }

    /// The entries up to `}`, or up to the end of the file when `braceLine` is `nil` (a top level without braces).
    private mutating func parseDictionary(depth: Int, braceLine: Int?) throws(ParseFailure) -> ConfigNode.Value {
        var entries: [ConfigNode.Entry] = []
        while true {
            try skipSpace()
            if braceLine != nil && cursor.peek == UInt8(ascii: "}") {
                cursor.advance()
                return .dictionary(entries)
            }
            guard let byte = cursor.peek else {
                guard let braceLine else { return .dictionary(entries) }
                throw cursor.failure(
                    "the file ends inside the dictionary that starts on line \(braceLine)", expected: "'}'")
            }
            let keyLine = cursor.line
            let keyColumn = columns.column(of: cursor)
            let key: String
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                key = try parseQuotedString()
            } else if isUnquotedStringByte(byte) {
                key = parseUnquotedString()
            } else {
                let closer = braceLine == nil ? "" : " or '}'"
                throw cursor.failure(
                    "expected a key (a string) or the end of the dictionary, found \(describeByte(cursor.peek))",
                    expected: "a key\(closer)")
            }
            try skipSpace()
            guard cursor.peek == UInt8(ascii: "=") else {
                if cursor.isAtEnd(ofValueBefore: ";", or: "}") {
                    throw keyWithoutValue(key, line: keyLine, column: keyColumn)
                }
                throw cursor.failure(
                    "expected '=' after the key \(quoted(key)), found \(describeByte(cursor.peek))",
                    expected: "\(key) = value;")
            }
            cursor.advance()
            try skipSpace()
            if cursor.isAtEnd(ofValueBefore: ";", or: "}") {
                throw keyWithoutValue(key, line: keyLine, column: keyColumn)
            }
            cursor.path.push(key: key)
            let value = try parseValue(depth: depth)
            cursor.path.pop()
            entries.append(ConfigNode.Entry(key: key, line: keyLine, column: keyColumn, value: value))
            try skipSpace()
            guard cursor.peek == UInt8(ascii: ";") else {
                throw cursor.failure(
                    "expected ';' after the value of \(quoted(key)), found \(describeByte(cursor.peek))",
                    expected: "';' after every value in a dictionary")
            }
            cursor.advance()
        }
    }

    private func keyWithoutValue(_ key: String, line: Int, column: Int) -> ParseFailure {
        cursor.keyWithoutValue(key, line: line, column: column, expected: "\(key) = value;")
    }

    private mutating func parseArray(depth: Int, parenthesisLine: Int) throws(ParseFailure) -> ConfigNode.Value {
        var elements: [ConfigNode] = []
        while true {
            try skipSpace()
            if cursor.peek == UInt8(ascii: ")") {
                cursor.advance()
                return .array(elements)
            }
            guard cursor.peek != nil else {
                throw cursor.failure(
                    "the file ends inside the array that starts on line \(parenthesisLine)", expected: "')'")
            }
            cursor.path.push(index: elements.count)
            elements.append(try parseValue(depth: depth))
            cursor.path.pop()
            try skipSpace()
            switch cursor.peek {
            case UInt8(ascii: ","): cursor.advance()
            case UInt8(ascii: ")"): continue
            default:
                throw cursor.failure(
                    "expected ',' or ')' after an element of the array that starts on line \(parenthesisLine), "
                        + "found \(describeByte(cursor.peek))")
            }
        }
    }

    private mutating func parseData() throws(ParseFailure) -> [UInt8] {
        let startLine = cursor.line
        cursor.advance()  // <
        var data: [UInt8] = []
        var high: UInt8?
        while true {
            guard let byte = cursor.peek else {
                throw cursor.failure(
                    "the file ends inside the data that starts on line \(startLine)", expected: "'>'")
            }
            if byte == UInt8(ascii: ">") {
                guard high == nil else {
                    throw cursor.failure(
                        "the data holds an odd number of hex digits", expected: "pairs of hex digits")
                }
                cursor.advance()
                return data
            }
            if isJSONWhitespace(byte) {
                cursor.advance()
                continue
            }
            guard let digit = TextCursor.hexDigit(byte) else {
                throw cursor.failure(
                    "data holds \(describeByte(byte))", expected: "hex digits (0-9, a-f) and spaces, then '>'")
            }
            cursor.advance()
            if let first = high {
                data.append(first << 4 | digit)
                high = nil
            } else {
                high = digit
            }
        }
    }

    private mutating func parseUnquotedString() -> String {
        let start = cursor.index
        cursor.advance(while: isUnquotedStringByte)
        return cursor.text(from: start)
    }

    private mutating func parseQuotedString() throws(ParseFailure) -> String {
        let quote = cursor.bytes[cursor.index]
        let startLine = cursor.line
        cursor.advance()
        var text: [UInt8] = []
        while true {
            guard let byte = cursor.peek else {
                throw cursor.failure(
                    "the file ends inside the string that starts on line \(startLine)",
                    expected: "a closing \(describeByte(quote))")
            }
            cursor.advance()
            if byte == quote { return String(decoding: text, as: UTF8.self) }
            guard byte == UInt8(ascii: "\\") else {
                text.append(byte)
                continue
            }
            try parseEscape(into: &text)
        }
    }

    /// One escape after a backslash: C's, `\U` and up to four hex digits, or up to three octal digits.
    private mutating func parseEscape(into text: inout [UInt8]) throws(ParseFailure) {
        do throws(TextStringError) {
            try cursor.decodeEscape(.openStep, into: &text)
        } catch {
            throw cursor.failure(error, in: .openStep)
        }
    }

    // MARK: - Bytes

    /// Skips whitespace and comments; fails on a comment that never ends.
    private mutating func skipSpace() throws(ParseFailure) {
        while let byte = cursor.peek {
            if isJSONWhitespace(byte) || byte == 0x0B || byte == 0x0C {
                cursor.advance()
            } else if cursor.startsWith("//") {
                while let next = cursor.peek, next != 0x0A, next != 0x0D { cursor.advance() }
            } else if cursor.startsWith("/*") {
                let startLine = cursor.line
                cursor.advance(by: 2)
                while !cursor.startsWith("*/") {
                    guard cursor.peek != nil else {
                        throw cursor.failure(
                            "the file ends inside the comment that starts on line \(startLine)", expected: "*/")
                    }
                    cursor.advance()
                }
                cursor.advance(by: 2)
            } else {
                return
            }
        }
    }
}

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
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    private var budget: ParseBudget
    private var path = KeyPathTracker()

    private init(bytes: [UInt8], limits: ConfigLimits) {
        self.bytes = bytes
        self.budget = ParseBudget(limits)
    }

    /// Parses a whole old-style plist.
    package static func parse(_ bytes: [UInt8], limits: ConfigLimits) throws(ParseFailure) -> ConfigNode {
        var parser = OpenStepPlistParser(bytes: bytes, limits: limits)
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        parser.index = start
        parser.lineStart = start
        try parser.skipSpace()
        guard parser.peek != nil else { throw parser.failure("the document holds no value", expected: "{ … }") }
        let value = try parser.parseValue(depth: 0)
        try parser.skipSpace()
        if parser.peek == nil { return value }
        // `"key" = value;` at the top: the contents of a dictionary without the braces, as in a .strings file.
        guard case .string = value.value, parser.peek == UInt8(ascii: "=") else {
            throw parser.failure(
                "found \(describeByte(parser.peek)) after the end of the top-level value",
                expected: "the end of the file")
        }
        parser = OpenStepPlistParser(bytes: bytes, limits: limits)
        parser.index = start
        parser.lineStart = start
        try parser.budget.countValue(line: 1)
        return ConfigNode(try parser.parseDictionary(depth: 1, braceLine: nil), line: 1)
    }

    // MARK: - Values

    private mutating func parseValue(depth: Int) throws(ParseFailure) -> ConfigNode {
        let valueLine = line
        try budget.countValue(line: valueLine)
        switch peek ?? 0 {
        case UInt8(ascii: "{"):
            try budget.checkDepth(depth + 1, line: valueLine)
            consume()
            return ConfigNode(try parseDictionary(depth: depth + 1, braceLine: valueLine), line: valueLine)
        case UInt8(ascii: "("):
            try budget.checkDepth(depth + 1, line: valueLine)
            consume()
            return ConfigNode(try parseArray(depth: depth + 1, parenthesisLine: valueLine), line: valueLine)
        case UInt8(ascii: "<"):
            return ConfigNode(.data(try parseData()), line: valueLine)
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return ConfigNode(.string(try parseQuotedString()), line: valueLine)
        case let byte where isUnquotedStringByte(byte):
            return ConfigNode(.string(parseUnquotedString()), line: valueLine)
        default:
            throw failure(
                "expected a value, found \(describeByte(peek))",
                expected: "a string, \"quoted string\", <hex data>, ( array ) or { dictionary }")
        }
    }

    /// The entries up to `}`, or up to the end of the file when `braceLine` is `nil` (a top level without braces).
    private mutating func parseDictionary(depth: Int, braceLine: Int?) throws(ParseFailure) -> ConfigNode.Value {
        var entries: [ConfigNode.Entry] = []
        while true {
            try skipSpace()
            if braceLine != nil && peek == UInt8(ascii: "}") {
                consume()
                return .dictionary(entries)
            }
            guard let byte = peek else {
                guard let braceLine else { return .dictionary(entries) }
                throw failure(
                    "the file ends inside the dictionary that starts on line \(braceLine)", expected: "'}'")
            }
            let keyLine = line
            let keyColumn = column
            let key: String
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                key = try parseQuotedString()
            } else if isUnquotedStringByte(byte) {
                key = parseUnquotedString()
            } else {
                let closer = braceLine == nil ? "" : " or '}'"
                throw failure(
                    "expected a key (a string) or the end of the dictionary, found \(describeByte(peek))",
                    expected: "a key\(closer)")
            }
            try skipSpace()
            guard peek == UInt8(ascii: "=") else {
                if peek == nil || peek == UInt8(ascii: ";") || peek == UInt8(ascii: "}") {
                    throw keyWithoutValue(key, line: keyLine, column: keyColumn)
                }
                throw failure(
                    "expected '=' after the key \(quoted(key)), found \(describeByte(peek))",
                    expected: "\(key) = value;")
            }
            consume()
            try skipSpace()
            if peek == nil || peek == UInt8(ascii: ";") || peek == UInt8(ascii: "}") {
                throw keyWithoutValue(key, line: keyLine, column: keyColumn)
            }
            path.push(key: key)
            let value = try parseValue(depth: depth)
            path.pop()
            entries.append(ConfigNode.Entry(key: key, line: keyLine, value: value))
            try skipSpace()
            guard peek == UInt8(ascii: ";") else {
                throw failure(
                    "expected ';' after the value of \(quoted(key)), found \(describeByte(peek))",
                    expected: "';' after every value in a dictionary")
            }
            consume()
        }
    }

    private func keyWithoutValue(_ key: String, line keyLine: Int, column keyColumn: Int) -> ParseFailure {
        .keyWithoutValue(
            key, path: path, line: keyLine, column: keyColumn, found: describeByte(peek),
            expected: "\(key) = value;")
    }

    private mutating func parseArray(depth: Int, parenthesisLine: Int) throws(ParseFailure) -> ConfigNode.Value {
        var elements: [ConfigNode] = []
        while true {
            try skipSpace()
            if peek == UInt8(ascii: ")") {
                consume()
                return .array(elements)
            }
            guard peek != nil else {
                throw failure("the file ends inside the array that starts on line \(parenthesisLine)", expected: "')'")
            }
            path.push(index: elements.count)
            elements.append(try parseValue(depth: depth))
            path.pop()
            try skipSpace()
            switch peek {
            case UInt8(ascii: ","): consume()
            case UInt8(ascii: ")"): continue
            default:
                throw failure(
                    "expected ',' or ')' after an element of the array that starts on line \(parenthesisLine), "
                        + "found \(describeByte(peek))")
            }
        }
    }

    private mutating func parseData() throws(ParseFailure) -> [UInt8] {
        let startLine = line
        consume()  // <
        var data: [UInt8] = []
        var high: UInt8?
        while true {
            guard let byte = peek else {
                throw failure("the file ends inside the data that starts on line \(startLine)", expected: "'>'")
            }
            if byte == UInt8(ascii: ">") {
                guard high == nil else {
                    throw failure("the data holds an odd number of hex digits", expected: "pairs of hex digits")
                }
                consume()
                return data
            }
            if isJSONWhitespace(byte) {
                consume()
                continue
            }
            guard let digit = hexDigit(byte) else {
                throw failure(
                    "data holds \(describeByte(byte))", expected: "hex digits (0-9, a-f) and spaces, then '>'")
            }
            consume()
            if let first = high {
                data.append(first << 4 | digit)
                high = nil
            } else {
                high = digit
            }
        }
    }

    private mutating func parseUnquotedString() -> String {
        let start = index
        while let byte = peek, isUnquotedStringByte(byte) { consume() }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func parseQuotedString() throws(ParseFailure) -> String {
        let quote = bytes[index]
        let startLine = line
        consume()
        var text: [UInt8] = []
        while true {
            guard let byte = peek else {
                throw failure(
                    "the file ends inside the string that starts on line \(startLine)",
                    expected: "a closing \(describeByte(quote))")
            }
            if byte == quote {
                consume()
                return String(decoding: text, as: UTF8.self)
            }
            consume()
            guard byte == UInt8(ascii: "\\") else {
                text.append(byte)
                continue
            }
            try parseEscape(into: &text)
        }
    }

    /// One escape after a backslash: C's, `\U` and up to four hex digits, or up to three octal digits.
    private mutating func parseEscape(into text: inout [UInt8]) throws(ParseFailure) {
        guard let byte = peek else { throw failure("the file ends inside an escape", expected: "an escape") }
        consume()
        switch byte {
        case UInt8(ascii: "a"): text.append(0x07)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "v"): text.append(0x0B)
        case UInt8(ascii: "U"):
            var value = try parseHexEscape()
            if (0xD800...0xDBFF).contains(value) {
                guard startsWith([UInt8(ascii: "\\"), UInt8(ascii: "U")]) else {
                    throw failure("\\U\(hex4(value)) is half of a surrogate pair; the other half is missing")
                }
                consume()
                consume()
                let low = try parseHexEscape()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw failure("\\U\(hex4(value)) must be followed by a low surrogate, found \\U\(hex4(low))")
                }
                value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(value) {
                throw failure("\\U\(hex4(value)) is half of a surrogate pair; the other half is missing")
            }
            // Valid by construction: not a surrogate, at most 0x10FFFF.
            text.append(contentsOf: Array(String(Unicode.Scalar(value)!).utf8))
        case UInt8(ascii: "0")...UInt8(ascii: "7"):
            var value = UInt32(byte - UInt8(ascii: "0"))
            for _ in 0..<2 {
                guard let next = peek, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(next) else { break }
                value = value << 3 | UInt32(next - UInt8(ascii: "0"))
                consume()
            }
            // Above \177, Apple reads octal escapes as NeXTSTEP-encoded characters, a table this reader does not
            // carry; a config has no reason to use them.
            guard value < 0x80 else {
                throw failure(
                    "the octal escape \\\(String(value, radix: 8)) is a NeXTSTEP character",
                    expected: "\\U and four hex digits for a character above \\177")
            }
            text.append(UInt8(value))
        default:
            // \" \' \\ and any other character stand for themselves.
            text.append(byte)
            if byte >= 0x80 {
                while let next = peek, next & 0xC0 == 0x80 {
                    text.append(next)
                    consume()
                }
            }
        }
    }

    private mutating func parseHexEscape() throws(ParseFailure) -> UInt32 {
        var value: UInt32 = 0
        var count = 0
        while count < 4, let byte = peek, let digit = hexDigit(byte) {
            value = value << 4 | UInt32(digit)
            count += 1
            consume()
        }
        guard count > 0 else { throw failure("expected hex digits after \\U, found \(describeByte(peek))") }
        return value
    }

    // MARK: - Bytes

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private var column: Int { index - lineStart + 1 }

    private func startsWith(_ prefix: [UInt8]) -> Bool {
        bytes.count - index >= prefix.count && bytes[index..<index + prefix.count].elementsEqual(prefix)
    }

    private mutating func consume() {
        let byte = bytes[index]
        index += 1
        if byte == 0x0A || (byte == 0x0D && peek != 0x0A) {
            line += 1
            lineStart = index
        }
    }

    /// Skips whitespace and comments; fails on a comment that never ends.
    private mutating func skipSpace() throws(ParseFailure) {
        while let byte = peek {
            if isJSONWhitespace(byte) || byte == 0x0B || byte == 0x0C {
                consume()
            } else if startsWith([UInt8(ascii: "/"), UInt8(ascii: "/")]) {
                while let next = peek, next != 0x0A, next != 0x0D { consume() }
            } else if startsWith([UInt8(ascii: "/"), UInt8(ascii: "*")]) {
                let startLine = line
                consume()
                consume()
                while !startsWith([UInt8(ascii: "*"), UInt8(ascii: "/")]) {
                    guard peek != nil else {
                        throw failure(
                            "the file ends inside the comment that starts on line \(startLine)", expected: "*/")
                    }
                    consume()
                }
                consume()
                consume()
            } else {
                return
            }
        }
    }

    private func failure(_ message: String, expected: String? = nil) -> ParseFailure {
        ParseFailure(
            .syntaxError, line: line, column: column, message, found: describeByte(peek), expected: expected)
    }
}

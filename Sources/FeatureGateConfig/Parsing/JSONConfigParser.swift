/// A strict RFC 8259 JSON parser that remembers the line of every value and enforces the reader's limits.
///
/// Foundation's `JSONSerialization` was not used: its errors give a character offset at best, it cannot tell
/// `1` from `1.0` from `true` on every platform, and it has no depth limit. The input has been checked to be
/// UTF-8 before this runs.
package struct JSONConfigParser {
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

    /// Parses one JSON value that fills the whole input (after an optional byte order mark).
    package static func parse(_ bytes: [UInt8], limits: ConfigLimits) throws(ParseFailure) -> ConfigNode {
        var parser = JSONConfigParser(bytes: bytes, limits: limits)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            parser.index = 3
            parser.lineStart = 3
        }
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.index < bytes.count {
            throw parser.failure(
                "found \(describeByte(parser.peek)) after the end of the top-level value",
                expected: "the end of the file")
        }
        return value
    }

    // MARK: - Values

    private mutating func parseValue(depth: Int) throws(ParseFailure) -> ConfigNode {
        let valueLine = line
        try budget.countValue(line: valueLine)
        switch peek ?? 0 {
        case UInt8(ascii: "{"):
            try budget.checkDepth(depth + 1, line: valueLine)
            return ConfigNode(try parseObject(depth: depth + 1), line: valueLine)
        case UInt8(ascii: "["):
            try budget.checkDepth(depth + 1, line: valueLine)
            return ConfigNode(try parseArray(depth: depth + 1), line: valueLine)
        case UInt8(ascii: "\""):
            return ConfigNode(.string(try parseString()), line: valueLine)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return ConfigNode(try parseNumber(), line: valueLine)
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return ConfigNode(.boolean(true), line: valueLine)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return ConfigNode(.boolean(false), line: valueLine)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return ConfigNode(.null, line: valueLine)
        default:
            throw failure(
                "expected a value, found \(describeByte(peek))",
                expected: "an object, array, string, number, true, false or null")
        }
    }

    private mutating func parseObject(depth: Int) throws(ParseFailure) -> ConfigNode.Value {
        index += 1  // {
        var entries: [ConfigNode.Entry] = []
        skipWhitespace()
        if peek == UInt8(ascii: "}") {
            index += 1
            return .dictionary(entries)
        }
        while true {
            guard peek == UInt8(ascii: "\"") else {
                let trailing = peek == UInt8(ascii: "}") ? " (JSON allows no comma before '}')" : ""
                throw failure("expected a key in double quotes, found \(describeByte(peek))\(trailing)")
            }
            let keyLine = line
            let keyColumn = index - lineStart + 1
            let key = try parseString()
            func keyWithoutValue() -> ParseFailure {
                .keyWithoutValue(
                    key, path: path, line: keyLine, column: keyColumn, found: describeByte(peek),
                    expected: "\"\(key)\": value")
            }
            skipWhitespace()
            if peek == nil || peek == UInt8(ascii: ",") || peek == UInt8(ascii: "}") { throw keyWithoutValue() }
            guard peek == UInt8(ascii: ":") else {
                throw failure("expected ':' after the key \(quoted(key)), found \(describeByte(peek))")
            }
            index += 1
            skipWhitespace()
            if peek == nil || peek == UInt8(ascii: ",") || peek == UInt8(ascii: "}") { throw keyWithoutValue() }
            path.push(key: key)
            let value = try parseValue(depth: depth)
            path.pop()
            entries.append(ConfigNode.Entry(key: key, line: keyLine, value: value))
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                index += 1
                return .dictionary(entries)
            default:
                throw failure("expected ',' or '}' after a value in an object, found \(describeByte(peek))")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(ParseFailure) -> ConfigNode.Value {
        index += 1  // [
        var elements: [ConfigNode] = []
        skipWhitespace()
        if peek == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            if peek == UInt8(ascii: "]") {
                throw failure("expected a value, found ']' (JSON allows no comma before ']')")
            }
            path.push(index: elements.count)
            elements.append(try parseValue(depth: depth))
            path.pop()
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default:
                throw failure("expected ',' or ']' after a value in an array, found \(describeByte(peek))")
            }
        }
    }

    private mutating func parseString() throws(ParseFailure) -> String {
        index += 1  // opening quote
        // Most strings hold no escape: take them straight from the input. At the first byte that needs a closer
        // look, carry on byte by byte from there.
        let start = index
        while index < bytes.count, bytes[index] >= 0x20, bytes[index] != UInt8(ascii: "\""),
            bytes[index] != UInt8(ascii: "\\")
        {
            index += 1
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            index += 1
            return String(decoding: bytes[start..<index - 1], as: UTF8.self)
        }
        var scalars = Array(bytes[start..<index])
        while true {
            guard let byte = peek else {
                throw failure("the file ends inside a string", expected: "a closing '\"'")
            }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: scalars, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                try parseEscape(into: &scalars)
            case 0x0A, 0x0D:
                throw failure("a string runs past the end of the line", expected: "a closing '\"' or \\n")
            case 0..<0x20:
                throw failure("a string holds the control character \(describeByte(byte))", expected: "an escape")
            default:
                scalars.append(byte)
                index += 1
            }
        }
    }

    private mutating func parseEscape(into scalars: inout [UInt8]) throws(ParseFailure) {
        guard let byte = peek else { throw failure("the file ends inside a string", expected: "a closing '\"'") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(byte)
        case UInt8(ascii: "b"): scalars.append(0x08)
        case UInt8(ascii: "f"): scalars.append(0x0C)
        case UInt8(ascii: "n"): scalars.append(0x0A)
        case UInt8(ascii: "r"): scalars.append(0x0D)
        case UInt8(ascii: "t"): scalars.append(0x09)
        case UInt8(ascii: "u"):
            var value = try parseHex4()
            if (0xD800...0xDBFF).contains(value) {
                guard peek == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                else { throw failure("\\u\(hex4(value)) is half of a surrogate pair; the other half is missing") }
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw failure("\\u\(hex4(value)) must be followed by a low surrogate, found \\u\(hex4(low))")
                }
                value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(value) {
                throw failure("\\u\(hex4(value)) is half of a surrogate pair; the other half is missing")
            }
            // Valid by construction: not a surrogate, at most 0x10FFFF.
            scalars.append(contentsOf: Array(String(Unicode.Scalar(value)!).utf8))
        default:
            index -= 2
            let shown = byte >= 0x21 && byte < 0x7F ? "\\\(Character(Unicode.Scalar(byte)))" : describeByte(byte)
            throw failure(
                "invalid escape \(shown) in a string", expected: #"\" \\ \/ \b \f \n \r \t or \uXXXX"#)
        }
    }

    private mutating func parseHex4() throws(ParseFailure) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek, let digit = hexDigit(byte) else {
                throw failure("expected four hexadecimal digits after \\u, found \(describeByte(peek))")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(ParseFailure) -> ConfigNode.Value {
        let start = index
        var isInteger = true
        if peek == UInt8(ascii: "-") { index += 1 }
        guard let first = peek, isDigit(first) else {
            throw failure("expected a digit after '-', found \(describeByte(peek))")
        }
        index += 1
        if first == UInt8(ascii: "0"), let next = peek, isDigit(next) {
            throw failure("a number starts with 0 followed by more digits; JSON does not allow leading zeros")
        }
        skipDigits()
        if peek == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard let next = peek, isDigit(next) else {
                throw failure("expected a digit after '.', found \(describeByte(peek))")
            }
            skipDigits()
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard let next = peek, isDigit(next) else {
                throw failure("expected a digit in the exponent, found \(describeByte(peek))")
            }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let integer = ConfigInteger(decimal: Substring(text)) {
            return .integer(integer)
        }
        return .real(text)
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(ParseFailure) {
        let count = literal.utf8CodeUnitCount
        let matches = literal.withUTF8Buffer { expected in
            bytes.count - index >= count && bytes[index..<index + count].elementsEqual(expected)
        }
        guard matches else {
            throw failure(
                "expected a value, found \(describeByte(peek))",
                expected: "an object, array, string, number, true, false or null")
        }
        index += count
    }

    // MARK: - Bytes

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipDigits() {
        while let byte = peek, isDigit(byte) { index += 1 }
    }

    private mutating func skipWhitespace() {
        while let byte = peek, isJSONWhitespace(byte) {
            index += 1
            if byte == 0x0A || (byte == 0x0D && peek != 0x0A) {
                line += 1
                lineStart = index
            }
        }
    }

    private func failure(_ message: String, expected: String? = nil) -> ParseFailure {
        ParseFailure(
            .syntaxError, line: line, column: index - lineStart + 1, message,
            found: describeByte(peek), expected: expected)
    }
}

@inline(__always)
private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

/// The value of an ASCII hexadecimal digit, or `nil`.
package func hexDigit(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 0x30...0x39: byte - 0x30
    case 0x41...0x46: byte - 0x41 + 10
    case 0x61...0x66: byte - 0x61 + 10
    default: nil
    }
}

import FeatureGate

// The format parsers' names for FeatureGate's parsing helpers, in every file of this module, also those that do not
// import FeatureGate.
package typealias KeyPathTracker = FeatureGate.KeyPathTracker
package typealias ParseBudget = NestingBudget

extension NestingBudget {
    /// The limits a config reader enforces.
    init(_ limits: ConfigLimits) {
        self.init(maximumDepth: limits.effectiveDepth, maximumValueCount: limits.maximumValueCount)
    }

    /// Counts one more value; fails once the document holds too many.
    mutating func countValue(line: Int?, column: Int? = nil) throws(ParseFailure) {
        guard countValue() else {
            throw ParseFailure(
                .tooManyValues, line: line, column: column,
                "the document holds more than \(maximumValueCount) values",
                expected: "at most \(maximumValueCount) values")
        }
    }

    /// Fails when a container at `depth` (1 for the top level) is nested too deep.
    func checkDepth(_ depth: Int, line: Int?, column: Int? = nil) throws(ParseFailure) {
        guard allows(depth: depth) else {
            throw ParseFailure(
                .nestingTooDeep, line: line, column: column,
                "containers are nested more than \(maximumDepth) levels deep",
                expected: "at most \(maximumDepth) levels of arrays and dictionaries")
        }
    }
}

extension TextCursor {
    /// A cursor over a config document, with the reader's limits.
    init(_ bytes: [UInt8], limits: ConfigLimits) {
        self.init(bytes, budget: NestingBudget(limits))
    }

    /// Counts the value that starts under the cursor toward the budget; returns its line and column.
    mutating func countValue() throws(ParseFailure) -> (line: Int, column: Int) {
        let place = (line: line, column: characterColumn)
        try budget.countValue(line: place.line, column: place.column)
        return place
    }

    /// The column of the byte under the cursor, from 1, in characters (Unicode scalars), as diagnostics count it:
    /// ``TextCursor/column`` counts bytes, which differ from characters after a non-ASCII character on the line.
    var characterColumn: Int {
        let lineStart = index - column + 1
        var characters = 1
        for offset in lineStart..<min(index, bytes.count) where bytes[offset] & 0xC0 != 0x80 { characters += 1 }
        return characters
    }

    /// Whether the cursor is where a value should be but the text ends, or a `separator` or `closer` comes instead.
    func isAtEnd(ofValueBefore separator: Unicode.Scalar, or closer: Unicode.Scalar) -> Bool {
        guard let byte = peek else { return true }
        return byte == UInt8(ascii: separator) || byte == UInt8(ascii: closer)
    }

    /// A syntax error at the cursor, naming the byte under it as what was found.
    func failure(_ message: String, expected: String? = nil) -> ParseFailure {
        ParseFailure(
            .syntaxError, line: line, column: characterColumn, message, found: describeByte(peek), expected: expected)
    }

    /// A key followed by no value (the cursor is on what came instead), placed at the key.
    func keyWithoutValue(_ key: String, line: Int, column: Int, expected: String) -> ParseFailure {
        .keyWithoutValue(key, path: path, line: line, column: column, found: describeByte(peek), expected: expected)
    }

    /// The syntax error for a string or escape the cursor could not read, in the words of `syntax`'s format.
    ///
    /// For an unknown escape, the cursor moves back to the backslash, where the error is placed.
    mutating func failure(_ error: TextStringError, in syntax: EscapeSyntax) -> ParseFailure {
        let marker = syntax == .json ? "\\u" : "\\U"
        switch error {
        case .unterminatedString, .unterminatedEscape:
            return syntax == .json
                ? failure("the file ends inside a string", expected: "a closing '\"'")
                : failure("the file ends inside an escape", expected: "an escape")
        case .controlCharacter(0x0A), .controlCharacter(0x0D):
            return failure("a string runs past the end of the line", expected: "a closing '\"' or \\n")
        case .controlCharacter(let byte):
            return failure("a string holds the control character \(describeByte(byte))", expected: "an escape")
        case .unknownEscape(let byte):
            index -= 1  // back to the backslash (never a line break)
            let shown = byte >= 0x21 && byte < 0x7F ? "\\\(Character(Unicode.Scalar(byte)))" : describeByte(byte)
            return failure("invalid escape \(shown) in a string", expected: #"\" \\ \/ \b \f \n \r \t or \uXXXX"#)
        case .missingHexDigits:
            let digits = syntax == .json ? "four hexadecimal digits" : "hex digits"
            return failure("expected \(digits) after \(marker), found \(describeByte(peek))")
        case .unpairedHighSurrogate(let value), .unpairedLowSurrogate(let value):
            return failure("\(marker)\(hex4(value)) is half of a surrogate pair; the other half is missing")
        case .notLowSurrogate(let high, let low):
            return failure("\(marker)\(hex4(high)) must be followed by a low surrogate, found \(marker)\(hex4(low))")
        case .octalAboveASCII(let value):
            return failure(
                "the octal escape \\\(String(value, radix: 8)) is a NeXTSTEP character",
                expected: "\\U and four hex digits for a character above \\177")
        }
    }
}

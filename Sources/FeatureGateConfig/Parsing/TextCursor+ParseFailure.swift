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

/// Columns in characters along the lines of a text, counted on from the last column asked for, so that placing every
/// value of a long line (a 1 MiB minified JSON file) costs one pass over it, not one pass per value.
struct CharacterColumns {
    private var lineStart = -1
    private var counted = 0
    private var characters = 1

    /// The column of the byte at `index` on the line that starts at `lineStart`, from 1, in characters.
    mutating func column(at index: Int, lineStart start: Int, in bytes: [UInt8]) -> Int {
        if start != lineStart || index < counted {
            lineStart = start
            counted = start
            characters = 1
        }
        let end = min(index, bytes.count)
        while counted < end {
            if bytes[counted] & 0xC0 != 0x80 { characters += 1 }
            counted += 1
        }
        return characters
    }

    /// The column of the byte under `cursor`.
    mutating func column(of cursor: TextCursor) -> Int {
        column(at: cursor.index, lineStart: cursor.index - cursor.column + 1, in: cursor.bytes)
    }
}

extension TextCursor {
    /// A cursor over a config document, with the reader's limits.
    init(_ bytes: [UInt8], limits: ConfigLimits) {
        self.init(bytes, budget: NestingBudget(limits))
    }

    /// Counts the value that starts under the cursor toward the budget; returns its line and its column, counted by
    /// `columns`.
    mutating func countValue(_ columns: inout CharacterColumns) throws(ParseFailure) -> (line: Int, column: Int) {
        let place = (line: line, column: columns.column(of: self))
        try budget.countValue(line: place.line, column: place.column)
        return place
    }

    /// The column of the byte under the cursor, from 1, in characters (Unicode scalars), as diagnostics count it:
    /// ``TextCursor/column`` counts bytes, which differ from characters after a non-ASCII character on the line. It
    /// counts the line from its start: for the one place of an error. A parser placing every value uses
    /// ``CharacterColumns``.
    var characterColumn: Int {
        var columns = CharacterColumns()
        return columns.column(of: self)
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

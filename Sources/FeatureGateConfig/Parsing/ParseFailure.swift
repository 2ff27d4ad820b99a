/// Why a parser stopped: the first problem it met, with its place when the format has lines.
package struct ParseFailure: Error, Sendable {
    package var kind: ConfigDiagnostic.Kind
    package var line: Int?
    package var column: Int?
    /// What is wrong, without the place.
    package var message: String
    package var found: String?
    package var expected: String?
    /// Where in the document, when the failure belongs to one key (a key without a value); otherwise the root.
    package var keyPath: String?

    package init(
        _ kind: ConfigDiagnostic.Kind,
        line: Int? = nil,
        column: Int? = nil,
        _ message: String,
        found: String? = nil,
        expected: String? = nil,
        keyPath: String? = nil
    ) {
        self.kind = kind
        self.line = line
        self.column = column
        self.message = message
        self.found = found
        self.expected = expected
        self.keyPath = keyPath
    }

    /// A key followed by no value: the next key, the end of its dictionary, or the end of the file.
    ///
    /// The place is the key's, so the message points at the line to fix rather than at whatever came next.
    package static func keyWithoutValue(
        _ key: String, path: KeyPathTracker, line: Int, column: Int?, found: String, expected: String
    ) -> ParseFailure {
        ParseFailure(
            .keyWithoutValue, line: line, column: column,
            "the key \(quoted(key)) has no value (found \(found) after it)", found: found, expected: expected,
            keyPath: path.appending(key: key))
    }

    /// The message with its place in front: `line 3, column 7: …`.
    package var placedMessage: String {
        switch (line, column) {
        case (let line?, let column?): "line \(line), column \(column): \(message)"
        case (let line?, nil): "line \(line): \(message)"
        default: message
        }
    }
}

/// How a byte reads in a message: `'x'`, `U+0000`, `byte 0xFF`.
package func describeByte(_ byte: UInt8?) -> String {
    guard let byte else { return "the end of the file" }
    if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
    if byte == 0x20 { return "a space" }
    if byte == 0x0A { return "a line break" }
    if byte < 0x80 { return "U+\(hex4(UInt32(byte)))" }
    return "byte 0x\(String(byte, radix: 16, uppercase: true))"
}

package func hex4(_ value: UInt32) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}

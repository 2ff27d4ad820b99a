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

/// The key path of the value a text parser is in, for the diagnostics that name a key: `a.b[2]`.
package struct KeyPathTracker {
    private var components: [String] = []

    package init() {}

    package mutating func push(key: String) { components.append(components.isEmpty ? key : "." + key) }
    package mutating func push(index: Int) { components.append("[\(index)]") }
    package mutating func pop() { components.removeLast() }

    /// The path of the current value, `(root)` at the top.
    package var current: String { components.isEmpty ? ConfigDiagnostic.rootKeyPath : components.joined() }

    /// The path of `key` inside the current container.
    package func appending(key: String) -> String {
        components.joined() + (components.isEmpty ? key : "." + key)
    }
}

/// The limits every parser enforces while it builds the tree.
package struct ParseBudget {
    let maximumDepth: Int
    let maximumValueCount: Int
    private(set) var valueCount = 0

    init(_ limits: ConfigLimits) {
        maximumDepth = limits.effectiveDepth
        maximumValueCount = limits.maximumValueCount
    }

    /// Counts one more value; fails once the document holds too many.
    mutating func countValue(line: Int?) throws(ParseFailure) {
        valueCount += 1
        if valueCount > maximumValueCount {
            throw ParseFailure(
                .tooManyValues, line: line,
                "the document holds more than \(maximumValueCount) values",
                expected: "at most \(maximumValueCount) values")
        }
    }

    /// Fails when a container at `depth` (1 for the top level) is nested too deep.
    func checkDepth(_ depth: Int, line: Int?) throws(ParseFailure) {
        if depth > maximumDepth {
            throw ParseFailure(
                .nestingTooDeep, line: line,
                "containers are nested more than \(maximumDepth) levels deep",
                expected: "at most \(maximumDepth) levels of arrays and dictionaries")
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

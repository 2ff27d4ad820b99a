import FeatureGate

/// One value of a parsed config document, with the line it started on when the format has lines.
///
/// The four parsers (JSON, XML, binary and old-style plists) and the dictionary bridge all produce this tree, so the
/// validator sees one shape whatever the format. Numbers keep the text they were written with, so a bitmask too
/// large for 64 bits can still be quoted back to the user.
package struct ConfigNode: Sendable {
    /// The value and, for containers, its children.
    package enum Value: Sendable {
        /// Key-value pairs in document order; duplicates are kept so the validator can report them.
        case dictionary([Entry])
        case array([ConfigNode])
        case string(String)
        case integer(ConfigInteger)
        /// A floating-point number, as written.
        case real(String)
        case boolean(Bool)
        /// A plist date: the text as written (or as shown for a binary plist), and the seconds since
        /// 2001-01-01T00:00:00Z when the format stores them (binary plists and parsed dictionaries).
        case date(text: String, seconds: Double?)
        /// Plist data (an ASCII plist's `<hex>` too), kept so that a conversion can write it back.
        case data([UInt8])
        /// JSON `null` (and `NSNull` in a dictionary passed in).
        case null
        /// Anything else a format can hold that a config never uses (a binary plist UID, say).
        case other(String)
    }

    /// One key of a dictionary, with the line of the key itself.
    package struct Entry: Sendable {
        package var key: String
        package var line: Int?
        /// The 1-based column of the key, where the parser knows it (a `.properties` file).
        package var column: Int?
        package var value: ConfigNode

        package init(key: String, line: Int?, column: Int? = nil, value: ConfigNode) {
            self.key = key
            self.line = line
            self.column = column
            self.value = value
        }
    }

    package var value: Value
    /// The 1-based line where the value starts, for formats with lines (XML, JSON and old-style plists).
    package var line: Int?
    /// The 1-based column where the value starts, where the parser knows it (a `.properties` file).
    package var column: Int?

    package init(_ value: Value, line: Int? = nil, column: Int? = nil) {
        self.value = value
        self.line = line
        self.column = column
    }

    /// How the value reads in a message without its text when it is a string (`a string of 12 characters`), for
    /// values of keys FeatureGate does not read, which may be secrets.
    package var kindSummary: String {
        if case .string(let text) = value { return "a string of \(text.unicodeScalars.count) characters" }
        return summary
    }

    /// How the value reads in a message: `boolean true`, `an array of 3 values`, `string "abc"`.
    package var summary: String {
        switch value {
        case .dictionary(let entries):
            entries.isEmpty ? "an empty dictionary" : "a dictionary of \(entries.count) keys"
        case .array(let elements):
            switch elements.count {
            case 0: "an empty array"
            case 1: "an array of 1 value"
            default: "an array of \(elements.count) values"
            }
        case .string(let text): "string \(quoted(text))"
        case .integer(let integer): "integer \(integer.text)"
        case .real(let text): "real \(text)"
        case .boolean(let flag): "boolean \(flag)"
        case .date(let text, _): "date \(text)"
        case .data(let bytes): "data (\(bytes.count) bytes)"
        case .null: "null"
        case .other(let kind): kind
        }
    }
}

/// An integer as written, with its magnitude when it fits in 64 bits.
package struct ConfigInteger: Sendable, Hashable {
    /// The decimal text, with a leading `-` when negative.
    package var text: String
    package var isNegative: Bool
    /// The absolute value, or `nil` when it does not fit in a `UInt64`.
    package var magnitude: UInt64?

    package init(text: String, isNegative: Bool, magnitude: UInt64?) {
        self.text = text
        self.isNegative = isNegative
        self.magnitude = magnitude
    }

    /// Parses `[+-]?[0-9]+`; returns `nil` for anything else.
    package init?(decimal text: Substring) {
        var digits = text
        var negative = false
        if let sign = digits.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        var magnitude: UInt64? = 0
        for byte in digits.utf8 {
            guard let current = magnitude else { break }
            let (times10, overflow1) = current.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - 0x30))
            magnitude = overflow1 || overflow2 ? nil : sum
        }
        let trimmed = digits.drop { $0 == "0" }
        let canonical = trimmed.isEmpty ? "0" : String(trimmed)
        self.init(
            text: (negative && canonical != "0" ? "-" : "") + canonical,
            isNegative: negative && magnitude != 0,
            magnitude: magnitude
        )
    }

    /// A signed 64-bit integer.
    package init(_ value: Int64) {
        self.init(text: String(value), isNegative: value < 0, magnitude: value.magnitude)
    }

    /// An unsigned 64-bit integer.
    package init(_ value: UInt64) {
        self.init(text: String(value), isNegative: false, magnitude: value)
    }
}

/// `text` in double quotes, control characters escaped, cut to 60 characters, for messages.
package func quoted(_ text: String) -> String {
    UntrustedText.quoted(text, limit: 60)
}

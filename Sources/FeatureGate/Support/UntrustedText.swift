/// Text that came from outside (a file, a key, a payload), made safe to print or to put into a diagnostic.
///
/// Every place that shows such text goes through ``escaped(_:limit:)``, so a crafted file cannot clear a terminal,
/// forge lines in a CI log or flood it.
package enum UntrustedText {
    /// The longest value shown whole, in characters; longer ones are cut and their length given.
    package static let defaultLimit = 200

    /// `text` with control and invisible direction characters escaped as Swift writes them (`\n`, `\t`, `\r`,
    /// `\u{1B}`), cut to `limit` characters with its full length in bytes appended when it is longer.
    package static func escaped(_ text: some StringProtocol, limit: Int = defaultLimit) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit {
                result += "… (\(text.utf8.count) bytes)"
                return result
            }
            count += 1
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if needsEscaping(scalar) {
                    result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    /// A path escaped, cut only past 1,024 characters (Darwin's `PATH_MAX`).
    package static func escapedPath(_ path: some StringProtocol) -> String {
        escaped(path, limit: 1024)
    }

    /// `text` escaped and in double quotes (with `"` and `\` escaped too), for messages that quote a value.
    package static func quoted(_ text: some StringProtocol, limit: Int = defaultLimit) -> String {
        var inner = ""
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { inner += "\\" }
            inner.unicodeScalars.append(scalar)
        }
        let cut = escaped(inner, limit: limit)
        // The length given is the value's own, not that of its escaped form.
        guard inner.unicodeScalars.count > limit, let ellipsis = cut.range(of: "… (", options: .backwards) else {
            return "\"" + cut + "\""
        }
        return "\"" + cut[..<ellipsis.lowerBound] + "\"… (\(text.utf8.count) bytes)"
    }

    /// Whether `text` holds a character ``escaped(_:limit:)`` would escape.
    package static func containsControlCharacters(_ text: some StringProtocol) -> Bool {
        text.unicodeScalars.contains { $0 == "\n" || $0 == "\r" || $0 == "\t" || needsEscaping($0) }
    }

    /// C0 and C1 controls, DEL, and the invisible characters that reorder or hide text (bidirectional overrides
    /// and isolates, zero-width marks, the byte order mark).
    package static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x200B...0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF: true
        default: false
        }
    }
}

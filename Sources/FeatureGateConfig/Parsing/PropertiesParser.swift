import FeatureGate

/// One key of a `.properties` file, with where its key and each character of its value came from.
package struct PropertiesEntry: Sendable, Hashable {
    package struct Place: Sendable, Hashable {
        package var line: Int
        package var column: Int
    }

    /// The key, escapes resolved.
    package var key: String
    /// The value as `java.util.Properties` returns it: escapes resolved, leading whitespace dropped, trailing kept.
    package var value: String
    /// Where the key starts.
    package var place: Place
    /// Where each Unicode scalar of ``value`` came from (the backslash, for an escape); a continuation line moves
    /// the place to the next line.
    package var valuePlaces: [Place]

    /// Where the value's scalar at `offset` came from; the key's place for an empty value.
    package func place(ofValueOffset offset: Int) -> Place {
        offset < valuePlaces.count ? valuePlaces[offset] : (valuePlaces.last ?? place)
    }
}

/// Reads a `.properties` file by the rules of `java.util.Properties.load(InputStream)`, as Android ships it
/// (OpenJDK's libcore), so that FeatureGate sees the keys and values Airship Android sees.
///
/// - The bytes are ISO-8859-1: every byte is one character; anything else is written as `\uXXXX`.
/// - A line ends at LF, CR or CR LF. A line whose first non-blank character is `#` or `!` is a comment; blank is
///   space, tab and form feed.
/// - A line that ends in an odd number of backslashes continues on the next line, whose leading blanks are dropped.
///   A continuation line is never a comment.
/// - The key runs to the first unescaped `=`, `:` or blank; blanks, then at most one `=` or `:`, then blanks
///   separate it from the value. The value keeps trailing blanks.
/// - `\t`, `\n`, `\r`, `\f` and `\uXXXX` are escapes; a backslash before any other character stands for that
///   character. A malformed `\uXXXX` makes `load` throw: this parser reports it with its place.
/// - A key given twice keeps its last value in `java.util.Properties`; the entries keep both, for the validator.
package enum PropertiesParser {
    /// Space, tab and form feed: what `java.util.Properties` calls whitespace.
    @inline(__always)
    static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0C }

    /// The entries in document order.
    package static func parse(_ bytes: [UInt8]) throws(ParseFailure) -> [PropertiesEntry] {
        var entries: [PropertiesEntry] = []
        // A logical line: its bytes with where each came from.
        var logical: [(byte: UInt8, place: PropertiesEntry.Place)] = []
        var index = 0
        var line = 1
        while index < bytes.count {
            logical.removeAll(keepingCapacity: true)
            // Skip blanks at the start of a natural line; a comment or blank line is skipped whole.
            var column = 1
            while index < bytes.count && isBlank(bytes[index]) {
                index += 1
                column += 1
            }
            if index < bytes.count && (bytes[index] == UInt8(ascii: "#") || bytes[index] == UInt8(ascii: "!")) {
                while index < bytes.count && bytes[index] != 0x0A && bytes[index] != 0x0D { index += 1 }
                skipLineEnd(bytes, &index, &line)
                continue
            }
            if index < bytes.count && (bytes[index] == 0x0A || bytes[index] == 0x0D) {
                skipLineEnd(bytes, &index, &line)
                continue
            }
            // Gather the logical line, following continuations.
            while true {
                var backslashes = 0
                while index < bytes.count && bytes[index] != 0x0A && bytes[index] != 0x0D {
                    backslashes = bytes[index] == UInt8(ascii: "\\") ? backslashes + 1 : 0
                    logical.append((bytes[index], .init(line: line, column: column)))
                    index += 1
                    column += 1
                }
                guard backslashes % 2 == 1 else {
                    skipLineEnd(bytes, &index, &line)
                    break
                }
                logical.removeLast()  // the continuation backslash
                guard index < bytes.count else { break }
                skipLineEnd(bytes, &index, &line)
                column = 1
                while index < bytes.count && isBlank(bytes[index]) {
                    index += 1
                    column += 1
                }
            }
            if let entry = try entry(from: logical) { entries.append(entry) }
        }
        return entries
    }

    private static func skipLineEnd(_ bytes: [UInt8], _ index: inout Int, _ line: inout Int) {
        guard index < bytes.count else { return }
        if bytes[index] == 0x0D && index + 1 < bytes.count && bytes[index + 1] == 0x0A { index += 1 }
        index += 1
        line += 1
    }

    /// Splits a logical line into key and value and resolves their escapes.
    private static func entry(
        from logical: [(byte: UInt8, place: PropertiesEntry.Place)]
    ) throws(ParseFailure) -> PropertiesEntry? {
        guard let first = logical.first else { return nil }
        var keyEnd = 0
        var escaped = false
        while keyEnd < logical.count {
            let byte = logical[keyEnd].byte
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "=") || byte == UInt8(ascii: ":") || isBlank(byte) {
                break
            }
            keyEnd += 1
        }
        var valueStart = keyEnd
        while valueStart < logical.count && isBlank(logical[valueStart].byte) { valueStart += 1 }
        if valueStart < logical.count
            && (logical[valueStart].byte == UInt8(ascii: "=") || logical[valueStart].byte == UInt8(ascii: ":"))
        {
            valueStart += 1
            while valueStart < logical.count && isBlank(logical[valueStart].byte) { valueStart += 1 }
        }
        let key = try unescape(logical[..<keyEnd])
        let value = try unescape(logical[valueStart...])
        return PropertiesEntry(
            key: key.text, value: value.text, place: first.place,
            valuePlaces: value.places.isEmpty && valueStart < logical.count ? [logical[valueStart].place] : value.places
        )
    }

    private static func unescape(
        _ slice: ArraySlice<(byte: UInt8, place: PropertiesEntry.Place)>
    ) throws(ParseFailure) -> (text: String, places: [PropertiesEntry.Place]) {
        var scalars = String.UnicodeScalarView()
        var places: [PropertiesEntry.Place] = []
        var index = slice.startIndex
        while index < slice.endIndex {
            let (byte, place) = slice[index]
            index += 1
            guard byte == UInt8(ascii: "\\") else {
                scalars.append(Unicode.Scalar(byte))  // ISO-8859-1: the byte is the code point
                places.append(place)
                continue
            }
            guard index < slice.endIndex else { break }  // a lone trailing backslash stands for nothing
            let next = slice[index].byte
            index += 1
            let resolved: Unicode.Scalar
            switch next {
            case UInt8(ascii: "t"): resolved = "\t"
            case UInt8(ascii: "n"): resolved = "\n"
            case UInt8(ascii: "r"): resolved = "\r"
            case UInt8(ascii: "f"): resolved = "\u{0C}"
            case UInt8(ascii: "u"):
                var value: UInt32 = 0
                for _ in 0..<4 {
                    guard index < slice.endIndex, let digit = hexValue(slice[index].byte) else {
                        throw ParseFailure(
                            .syntaxError, line: place.line, column: place.column,
                            "malformed \\uXXXX escape: expected four hexadecimal digits after \\u "
                                + "(java.util.Properties refuses the whole file, and Airship Android then reads none "
                                + "of it)",
                            found: index < slice.endIndex ? describeByte(slice[index].byte) : "the end of the line",
                            expected: "four hexadecimal digits")
                    }
                    value = value << 4 | digit
                    index += 1
                }
                // Java's characters are UTF-16: a high surrogate escape and a low one make one character. A lone
                // surrogate has no scalar; it cannot name anything, so U+FFFD stands in for it.
                if (0xD800...0xDBFF).contains(value), let low = lowSurrogate(in: slice, at: index) {
                    value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                resolved = Unicode.Scalar(value) ?? "\u{FFFD}"
            default: resolved = Unicode.Scalar(next)
            }
            scalars.append(resolved)
            places.append(place)
        }
        return (String(scalars), places)
    }

    /// The low surrogate a `\uXXXX` escape at `index` writes, if it is one.
    private static func lowSurrogate(
        in slice: ArraySlice<(byte: UInt8, place: PropertiesEntry.Place)>, at index: Int
    ) -> UInt32? {
        guard index + 6 <= slice.endIndex, slice[index].byte == UInt8(ascii: "\\"),
            slice[index + 1].byte == UInt8(ascii: "u")
        else { return nil }
        var value: UInt32 = 0
        for offset in 2..<6 {
            guard let digit = hexValue(slice[index + offset].byte) else { return nil }
            value = value << 4 | digit
        }
        return (0xDC00...0xDFFF).contains(value) ? value : nil
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}

extension PropertiesParser {
    /// The entries as the tree the validator reads, typed as FeatureGate reads a `.properties` file strictly.
    ///
    /// The two keys FeatureGate reads are trimmed as Airship Android trims them (every character up to U+0020 at
    /// either end); other keys keep their value as `java.util.Properties` gives it.
    /// `enabledFeatures` is an integer when it is `[+-]?[0-9]+` (of any size: the validator reports what does not
    /// fit), and otherwise an array of the names between commas and spaces (a trailing separator adds no name, as in
    /// Android's `split("[, ]+")`); an empty value stays an empty string. `resetEnabledFeatures` is a boolean when it
    /// is `true` or `false` in any case, and otherwise a string (a wrong type, for the validator). Every other key is
    /// a string.
    package static func tree(_ entries: [PropertiesEntry]) -> ConfigNode {
        ConfigNode(
            .dictionary(
                entries.map { entry in
                    ConfigNode.Entry(
                        key: entry.key, line: entry.place.line, column: entry.place.column, value: node(for: entry))
                }),
            line: entries.first?.place.line ?? 1, column: entries.first?.place.column ?? 1)
    }

    private static func node(for entry: PropertiesEntry) -> ConfigNode {
        let (text, start) = trimmedAsAndroid(entry.value)
        let place = entry.place(ofValueOffset: start)
        switch entry.key {
        case ConfigValidator.enabledFeaturesKey where !text.isEmpty:
            if let integer = ConfigInteger(decimal: Substring(text)) {
                return ConfigNode(.integer(integer), line: place.line, column: place.column)
            }
            let names = androidNameRanges(in: text).map { range in
                let namePlace = entry.place(ofValueOffset: start + range.lowerBound)
                return ConfigNode(
                    .string(
                        String(
                            String.UnicodeScalarView(
                                text.unicodeScalars.dropFirst(range.lowerBound)
                                    .prefix(range.count)))),
                    line: namePlace.line, column: namePlace.column)
            }
            return ConfigNode(.array(names), line: place.line, column: place.column)
        case ConfigValidator.resetEnabledFeaturesKey where ["true", "false"].contains(text.lowercased()):
            return ConfigNode(.boolean(text.lowercased() == "true"), line: place.line, column: place.column)
        default:
            // Keys FeatureGate does not read keep their value as java.util.Properties gives it.
            let valuePlace = entry.place(ofValueOffset: 0)
            return ConfigNode(.string(entry.value), line: valuePlace.line, column: valuePlace.column)
        }
    }

    /// `value` without the characters up to U+0020 at either end (Kotlin's `trim { it <= ' ' }`), and the scalar
    /// offset where what is left starts.
    package static func trimmedAsAndroid(_ value: String) -> (text: String, start: Int) {
        let scalars = Array(value.unicodeScalars)
        var start = 0
        var end = scalars.count
        while start < end && scalars[start].value <= 0x20 { start += 1 }
        while end > start && scalars[end - 1].value <= 0x20 { end -= 1 }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[start..<end])
        return (String(view), start)
    }

    /// The scalar ranges of the items of `text` split as Android's `split("[, ]+")` then `dropLastWhile { empty }`:
    /// a run of commas and spaces separates two items, an empty first item stays, empty last items go.
    package static func androidNameRanges(in text: String) -> [Range<Int>] {
        let scalars = Array(text.unicodeScalars)
        var ranges: [Range<Int>] = []
        var start = 0
        var index = 0
        while index < scalars.count {
            if scalars[index] == "," || scalars[index] == " " {
                ranges.append(start..<index)
                while index < scalars.count && (scalars[index] == "," || scalars[index] == " ") { index += 1 }
                start = index
            } else {
                index += 1
            }
        }
        ranges.append(start..<scalars.count)
        while let last = ranges.last, last.isEmpty { ranges.removeLast() }
        return ranges
    }
}

/// Which escapes a quoted string knows.
package enum EscapeSyntax: Sendable {
    /// JSON's: `\" \\ \/ \b \f \n \r \t` and `\u` with exactly four hex digits; any other is an error.
    case json
    /// The old-style (OpenStep) plist's: C's `\a \b \f \n \r \t \v`, `\U` with one to four hex digits, up to three
    /// octal digits (at most `\177`); any other character stands for itself.
    case openStep
}

/// Why a quoted string could not be read, with the cursor where each case says; each parser words it.
package enum TextStringError: Error, Sendable {
    /// The text ends before the closing quote (the cursor is at the end).
    case unterminatedString
    /// The text ends right after a backslash (the cursor is at the end).
    case unterminatedEscape
    /// A control character, line breaks included, that a JSON string must escape (the cursor is on it).
    case controlCharacter(UInt8)
    /// A backslash followed by a character the syntax gives no meaning (the cursor is on that character).
    case unknownEscape(UInt8)
    /// `\u` (or `\U`) without its hex digits (the cursor is on the first byte that is not one).
    case missingHexDigits
    /// A high surrogate not followed by an escaped low one (the cursor is right after the high one's digits).
    case unpairedHighSurrogate(UInt32)
    /// A high surrogate followed by an escape that is not a low surrogate (the cursor is after the second one).
    case notLowSurrogate(high: UInt32, low: UInt32)
    /// A low surrogate with no high one before it (the cursor is right after its digits).
    case unpairedLowSurrogate(UInt32)
    /// An octal escape above `\177`, a NeXTSTEP character (the cursor is right after its digits).
    case octalAboveASCII(UInt32)
}

extension TextCursor {
    /// Decodes the escape after a backslash the cursor has just stepped over, appending its UTF-8 to `text`.
    package mutating func decodeEscape(_ syntax: EscapeSyntax, into text: inout [UInt8]) throws(TextStringError) {
        guard let byte = peek else { throw .unterminatedEscape }
        switch (byte, syntax) {
        case (UInt8(ascii: "\""), .json), (UInt8(ascii: "\\"), .json), (UInt8(ascii: "/"), .json):
            text.append(byte)
        case (UInt8(ascii: "b"), _): text.append(0x08)
        case (UInt8(ascii: "f"), _): text.append(0x0C)
        case (UInt8(ascii: "n"), _): text.append(0x0A)
        case (UInt8(ascii: "r"), _): text.append(0x0D)
        case (UInt8(ascii: "t"), _): text.append(0x09)
        case (UInt8(ascii: "a"), .openStep): text.append(0x07)
        case (UInt8(ascii: "v"), .openStep): text.append(0x0B)
        case (UInt8(ascii: "u"), .json), (UInt8(ascii: "U"), .openStep):
            advance(by: 1)
            try decodeUnicodeEscape(marker: byte, syntax, into: &text)
            return
        case (UInt8(ascii: "0")...UInt8(ascii: "7"), .openStep):
            advance(by: 1)
            try decodeOctalEscape(firstDigit: byte, into: &text)
            return
        case (_, .json):
            throw .unknownEscape(byte)
        case (_, .openStep):
            // \" \' \\ and any other character stand for themselves, a multi-byte one whole.
            advance()
            text.append(byte)
            if byte >= 0x80 {
                while let next = peek, next & 0xC0 == 0x80 {
                    text.append(next)
                    advance(by: 1)
                }
            }
            return
        }
        advance(by: 1)
    }

    /// The hex digits after `\u` or `\U`, and a surrogate pair's second half.
    private mutating func decodeUnicodeEscape(
        marker: UInt8, _ syntax: EscapeSyntax, into text: inout [UInt8]
    ) throws(TextStringError) {
        var value = try hexEscapeValue(syntax)
        if (0xD800...0xDBFF).contains(value) {
            guard peek == UInt8(ascii: "\\"), peek(ahead: 1) == marker else { throw .unpairedHighSurrogate(value) }
            advance(by: 2)
            let low = try hexEscapeValue(syntax)
            guard (0xDC00...0xDFFF).contains(low) else { throw .notLowSurrogate(high: value, low: low) }
            value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(value) {
            throw .unpairedLowSurrogate(value)
        }
        // Valid by construction: not a surrogate, at most 0x10FFFF.
        UTF8.encode(Unicode.Scalar(value)!) { text.append($0) }
    }

    /// JSON's four hex digits, or the old-style plist's one to four.
    private mutating func hexEscapeValue(_ syntax: EscapeSyntax) throws(TextStringError) -> UInt32 {
        var value: UInt32 = 0
        var count = 0
        while count < 4 {
            guard let byte = peek, let digit = Self.hexDigit(byte) else {
                if syntax == .openStep && count > 0 { break }
                throw .missingHexDigits
            }
            value = value << 4 | UInt32(digit)
            count += 1
            advance(by: 1)
        }
        return value
    }

    /// Up to three octal digits, the first already read.
    private mutating func decodeOctalEscape(firstDigit: UInt8, into text: inout [UInt8]) throws(TextStringError) {
        var value = UInt32(firstDigit - UInt8(ascii: "0"))
        for _ in 0..<2 {
            guard let next = peek, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(next) else { break }
            value = value << 3 | UInt32(next - UInt8(ascii: "0"))
            advance(by: 1)
        }
        // Above \177, Apple reads octal escapes as NeXTSTEP-encoded characters, a table this reader does not carry;
        // a config has no reason to use them.
        guard value < 0x80 else { throw .octalAboveASCII(value) }
        text.append(UInt8(value))
    }
}

/// Which part of a JSON number lacks its digits.
package enum JSONNumberPart: Error, Sendable {
    /// The integer part (after a `-`).
    case integer
    /// The fraction (after a `.`).
    case fraction
    /// The exponent (after `e` or `E` and a sign).
    case exponent
}

extension TextCursor {
    /// Reads the JSON string whose opening quote is under the cursor, leaving the cursor after its closing quote.
    package mutating func readJSONString() throws(TextStringError) -> String {
        advance(by: 1)  // the opening quote
        // Most strings hold no escape: take them straight from the input. At the first byte that needs a closer look,
        // carry on byte by byte from there. Line breaks are control characters, so this stays within a line.
        let start = index
        advance { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
        if peek == UInt8(ascii: "\"") {
            advance(by: 1)
            return String(decoding: bytes[start..<index - 1], as: UTF8.self)
        }
        var text = Array(bytes[start..<index])
        while true {
            guard let byte = peek else { throw .unterminatedString }
            switch byte {
            case UInt8(ascii: "\""):
                advance(by: 1)
                return String(decoding: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                advance(by: 1)
                try decodeEscape(.json, into: &text)
            case 0..<0x20:
                throw .controlCharacter(byte)
            default:
                text.append(byte)
                advance(by: 1)
            }
        }
    }

    /// Steps over the JSON number under the cursor (a `-` or a digit) and says whether it is an integer: no fraction
    /// and no exponent.
    ///
    /// After a leading `0` the integer part ends, so `01` reads as `0` followed by `1`.
    /// - Throws: the part that lacks its digits, with the cursor where a digit should be.
    package mutating func scanJSONNumber() throws(JSONNumberPart) -> Bool {
        var isInteger = true
        if peek == UInt8(ascii: "-") { advance(by: 1) }
        guard let first = peek, Self.isDigit(first) else { throw .integer }
        advance(by: 1)
        if first != UInt8(ascii: "0") { advance(while: Self.isDigit) }
        if peek == UInt8(ascii: ".") {
            isInteger = false
            advance(by: 1)
            guard let next = peek, Self.isDigit(next) else { throw .fraction }
            advance(while: Self.isDigit)
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            isInteger = false
            advance(by: 1)
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { advance(by: 1) }
            guard let next = peek, Self.isDigit(next) else { throw .exponent }
            advance(while: Self.isDigit)
        }
        return isInteger
    }
}

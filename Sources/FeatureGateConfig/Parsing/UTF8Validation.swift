/// Where UTF-8 text goes wrong: the offset of the first byte that does not start or continue a valid scalar.
///
/// Rejects what Unicode forbids: overlong forms, surrogates, values past U+10FFFF, truncated sequences. Returns
/// `nil` for valid text.
package func firstInvalidUTF8Offset(in bytes: [UInt8], from start: Int = 0) -> Int? {
    var index = start
    let count = bytes.count
    while index < count {
        let lead = bytes[index]
        if lead < 0x80 {
            index += 1
            continue
        }
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            upper = 0x9F
        case 0xF0:
            length = 4
            lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            upper = 0x8F
        default: return index
        }
        guard index + length <= count else { return index }
        // Only the first continuation byte has a narrowed range.
        guard (lower...upper).contains(bytes[index + 1]) else { return index }
        for offset in 2..<length where !(0x80...0xBF).contains(bytes[index + offset]) {
            return index
        }
        index += length
    }
    return nil
}

/// The 1-based line and column of a byte offset: one more than the line breaks before it, and one more than the
/// characters (UTF-8 lead bytes) between the start of that line and the offset.
package func textPlace(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
    var line = 1
    var column = 1
    var index = 0
    let end = min(offset, bytes.count)
    while index < end {
        if bytes[index] == 0x0A || (bytes[index] == 0x0D && (index + 1 >= bytes.count || bytes[index + 1] != 0x0A)) {
            line += 1
            column = 1
        } else if bytes[index] & 0xC0 != 0x80 && !(index < 3 && bytes.starts(with: [0xEF, 0xBB, 0xBF])) {
            column += 1
        }
        index += 1
    }
    return (line, column)
}

/// A reading position in UTF-8 text, for the hand-written parsers of config files and remote payloads: the byte under
/// it, its line and column, how much nesting and how many values the text may still hold, and the key path of the
/// value being read.
///
/// Lines end at a line feed, a carriage return, or both together (counted once). Only ``advance()`` and
/// ``skipWhitespace()`` cross a line break; the other moves stay within a line. Everything is a value: copying a cursor
/// copies no bytes.
package struct TextCursor {
    /// The whole text.
    @usableFromInline package let bytes: [UInt8]
    /// The offset of the byte under the cursor; `bytes.count` at the end.
    @usableFromInline package var index: Int
    /// The line of the byte under the cursor, from 1.
    @usableFromInline package internal(set) var line = 1
    /// The offset of the first byte of ``line``.
    @usableFromInline var lineStart: Int
    /// How deep containers may still nest and how many values may still come.
    package var budget: NestingBudget
    /// The key path of the value being read, for messages that name a key.
    package var path = KeyPathTracker()

    /// A cursor at the start of `bytes`, after a UTF-8 byte order mark if there is one.
    package init(_ bytes: [UInt8], budget: NestingBudget) {
        self.bytes = bytes
        self.budget = budget
        index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        lineStart = index
    }

    /// The byte under the cursor, `nil` at the end.
    @inlinable @inline(__always) package var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    /// The column of the byte under the cursor, from 1, in bytes.
    @inlinable @inline(__always) package var column: Int { index - lineStart + 1 }

    /// The byte `offset` bytes after the one under the cursor, `nil` past the end.
    @inlinable @inline(__always) package func peek(ahead offset: Int) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    /// Whether the text continues with `prefix`.
    @inlinable package func startsWith(_ prefix: StaticString) -> Bool {
        matchingLength(prefix) == prefix.utf8CodeUnitCount
    }

    /// How many of `literal`'s bytes the text continues with, before the first that differs.
    @inlinable package func matchingLength(_ literal: StaticString) -> Int {
        literal.withUTF8Buffer { expected in
            var count = 0
            while count < expected.count, index + count < bytes.count, bytes[index + count] == expected[count] {
                count += 1
            }
            return count
        }
    }

    /// Steps over the byte under the cursor, counting a line break.
    @inlinable @inline(__always) package mutating func advance() {
        let byte = bytes[index]
        index += 1
        if byte == 0x0A || (byte == 0x0D && peek != 0x0A) {
            line += 1
            lineStart = index
        }
    }

    /// Steps over `count` bytes, none of them a line break.
    @inlinable @inline(__always) package mutating func advance(by count: Int) { index += count }

    /// Steps over the bytes `accepted` takes; it must take no line feed or carriage return.
    @inlinable package mutating func advance(while accepted: (UInt8) -> Bool) {
        while index < bytes.count, accepted(bytes[index]) { index += 1 }
    }

    /// Steps over spaces, tabs and line breaks (JSON's whitespace).
    @inlinable package mutating func skipWhitespace() {
        while let byte = peek, Self.isWhitespace(byte) { advance() }
    }

    /// The text from `start` up to the cursor.
    @inlinable package func text(from start: Int) -> String {
        String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Space, tab, line feed and carriage return: the whitespace of JSON and of XML.
    @inlinable @inline(__always) package static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// Whether `byte` is an ASCII decimal digit.
    @inlinable @inline(__always) package static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// The value of an ASCII hexadecimal digit, or `nil`.
    @inlinable package static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}

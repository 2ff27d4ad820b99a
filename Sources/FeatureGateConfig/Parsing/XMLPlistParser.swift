import Foundation

/// A parser for XML property lists that remembers the line and column of every element and enforces the reader's
/// limits.
///
/// It reads what Xcode and `plutil` write: an optional XML declaration, comments and a DOCTYPE, then
/// `<plist>` around one value (a bare value is accepted too). Elements are `dict`, `array`, `string`, `key`,
/// `integer`, `real`, `true`, `false`, `date` and `data`; text may use the five predefined entities, character
/// references and CDATA sections. Foundation's parser was not used: it reports no line for values that parse but
/// are wrong, it differs between platforms, and it has no depth limit. The input has been checked to be UTF-8.
package struct XMLPlistParser {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    /// The offset of the first byte of ``line``.
    private var lineStart = 0
    private var columns = CharacterColumns()
    private var budget: ParseBudget
    private var path = KeyPathTracker()

    fileprivate struct Tag {
        var name: String
        var isSelfClosing: Bool
        var line: Int
        /// The column of the tag's `<`, in characters.
        var column: Int
    }

    private init(bytes: [UInt8], limits: ConfigLimits) {
        self.bytes = bytes
        self.budget = ParseBudget(limits)
    }

    /// Parses a whole XML plist document.
    package static func parse(_ bytes: [UInt8], limits: ConfigLimits) throws(ParseFailure) -> ConfigNode {
        var parser = XMLPlistParser(bytes: bytes, limits: limits)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            parser.index = 3
            parser.lineStart = 3
        }
        return try parser.parseDocument()
    }

    // MARK: - Document

    private mutating func parseDocument() throws(ParseFailure) -> ConfigNode {
        try skipMisc(inProlog: true)
        guard peek == UInt8(ascii: "<") else {
            throw failure(
                peek == nil ? "the document has no element" : "expected '<', found \(describeByte(peek))",
                expected: "<plist>")
        }
        let root = try readStartTag()
        let value: ConfigNode
        if root.name == "plist" {
            if root.isSelfClosing {
                throw failure("<plist/> holds no value", at: root, expected: "<plist><dict>…</dict></plist>")
            }
            try skipMisc()
            if startsWith("</") || peek == nil {
                throw failure("<plist> holds no value", expected: "<plist><dict>…</dict></plist>")
            }
            value = try parseValue(depth: 0)
            try skipMisc()
            try expectEndTag("plist")
        } else {
            value = try parseElement(root, depth: 0)
        }
        try skipMisc()
        if index < bytes.count {
            throw failure("found \(describeByte(peek)) after the end of the plist", expected: "the end of the file")
        }
        return value
    }

    /// Skips whitespace, comments and processing instructions (and, before the root, a DOCTYPE).
    private mutating func skipMisc(inProlog: Bool = false) throws(ParseFailure) {
        while true {
            while let byte = peek, isJSONWhitespace(byte) { consume() }
            if startsWith("<!--") {
                try skipComment()
            } else if startsWith("<?") {
                try skipProcessingInstruction()
            } else if inProlog && startsWith("<!DOCTYPE") {
                try skipDoctype()
            } else {
                return
            }
        }
    }

    private mutating func skipComment() throws(ParseFailure) {
        let startLine = line
        try skip(past: "-->", what: "a comment", startLine: startLine, from: 4)
    }

    private mutating func skipProcessingInstruction() throws(ParseFailure) {
        let startLine = line
        let startColumn = columns.column(at: index, lineStart: lineStart, in: bytes)
        let start = index
        try skip(past: "?>", what: "a processing instruction", startLine: startLine, from: 2)
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard text.hasPrefix("<?xml ") || text.hasPrefix("<?xml\t") || text.hasPrefix("<?xml\n") else { return }
        if let encoding = Self.declaredEncoding(in: text),
            !["utf-8", "utf8", "us-ascii", "ascii"].contains(encoding.lowercased()),
            bytes.contains(where: { $0 >= 0x80 })
        {
            throw ParseFailure(
                .invalidEncoding, line: startLine, column: startColumn,
                "the XML declaration says encoding \(quoted(encoding)); only UTF-8 is read",
                found: "encoding \(quoted(encoding))", expected: "UTF-8")
        }
    }

    private static func declaredEncoding(in declaration: String) -> String? {
        guard let range = declaration.range(of: "encoding") else { return nil }
        var rest = declaration[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        rest = rest.dropFirst()
        return String(rest.prefix { $0 != quote })
    }

    private mutating func skipDoctype() throws(ParseFailure) {
        let startLine = line
        var bracketDepth = 0
        var quote: UInt8?
        while let byte = peek {
            consume()
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                bracketDepth += 1
            } else if byte == UInt8(ascii: "]") {
                bracketDepth -= 1
            } else if byte == UInt8(ascii: ">") && bracketDepth <= 0 {
                return
            }
        }
        throw failure("the file ends inside the DOCTYPE that starts on line \(startLine)", expected: "'>'")
    }

    /// Moves past `terminator`, starting `offset` bytes in; fails at the end of the file.
    private mutating func skip(
        past terminator: StaticString, what: String, startLine: Int, from offset: Int
    )
        throws(ParseFailure)
    {
        for _ in 0..<offset { consume() }
        while index < bytes.count {
            if startsWith(terminator) {
                for _ in 0..<terminator.utf8CodeUnitCount { consume() }
                return
            }
            consume()
        }
        throw failure("the file ends inside \(what) that starts on line \(startLine)", expected: "'\(terminator)'")
    }

    // MARK: - Values

    private mutating func parseValue(depth: Int) throws(ParseFailure) -> ConfigNode {
        guard peek == UInt8(ascii: "<"), !startsWith("</") else {
            throw failure(
                "expected a value element, found \(startsWith("</") ? "a closing tag" : describeByte(peek))",
                expected: Self.valueElements)
        }
        return try parseElement(readStartTag(), depth: depth)
    }

    private static let valueElements =
        "<dict>, <array>, <string>, <integer>, <real>, <true/>, <false/>, <date> or <data>"

    private mutating func parseElement(_ tag: Tag, depth: Int) throws(ParseFailure) -> ConfigNode {
        try budget.countValue(line: tag.line, column: tag.column)
        switch tag.name {
        case "dict":
            try budget.checkDepth(depth + 1, line: tag.line, column: tag.column)
            return ConfigNode(try parseDictionary(tag, depth: depth + 1), at: tag)
        case "array":
            try budget.checkDepth(depth + 1, line: tag.line, column: tag.column)
            var elements: [ConfigNode] = []
            if !tag.isSelfClosing {
                while true {
                    try skipMisc()
                    if startsWith("</") {
                        try expectEndTag("array")
                        break
                    }
                    if peek == nil {
                        throw failure(
                            "the file ends inside the <array> that starts on line \(tag.line)", expected: "</array>")
                    }
                    path.push(index: elements.count)
                    elements.append(try parseValue(depth: depth + 1))
                    path.pop()
                }
            }
            return ConfigNode(.array(elements), at: tag)
        case "string":
            return ConfigNode(.string(try readText(of: tag)), at: tag)
        case "integer":
            let text = try readText(of: tag).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let integer = ConfigInteger(decimal: Substring(text)) else {
                // The value is not shown: it may sit under a key FeatureGate does not read, such as a secret.
                throw failure(
                    "<integer> holds \(text.count) characters that are not a decimal integer", at: tag,
                    expected: "a decimal integer")
            }
            return ConfigNode(.integer(integer), at: tag)
        case "real":
            let text = try readText(of: tag).trimmingCharacters(in: .whitespacesAndNewlines)
            guard Double(text) != nil else {
                // Not shown either, as for <integer>: it may be a secret under a key FeatureGate does not read.
                throw failure(
                    "<real> holds \(text.count) characters that are not a decimal number", at: tag,
                    expected: "a decimal number")
            }
            return ConfigNode(.real(text), at: tag)
        case "true", "false":
            let text = try readText(of: tag)
            guard text.allSatisfy(\.isWhitespace) else {
                throw failure("<\(tag.name)> holds text", at: tag, expected: "<\(tag.name)/>")
            }
            return ConfigNode(.boolean(tag.name == "true"), at: tag)
        case "date":
            let text = try readText(of: tag).trimmingCharacters(in: .whitespacesAndNewlines)
            return ConfigNode(.date(text: text, seconds: nil), at: tag)
        case "data":
            let text = try readText(of: tag).filter { !$0.isWhitespace }
            guard let data = Data(base64Encoded: text) else {
                throw failure("<data> holds text that is not base64", at: tag, expected: "base64 text")
            }
            return ConfigNode(.data([UInt8](data)), at: tag)
        case "key":
            throw failure("<key> outside a <dict>", at: tag, expected: Self.valueElements)
        default:
            throw failure("unknown element <\(tag.name)>", at: tag, expected: Self.valueElements)
        }
    }

    private mutating func parseDictionary(_ tag: Tag, depth: Int) throws(ParseFailure) -> ConfigNode.Value {
        var entries: [ConfigNode.Entry] = []
        guard !tag.isSelfClosing else { return .dictionary(entries) }
        while true {
            try skipMisc()
            if startsWith("</") {
                try expectEndTag("dict")
                return .dictionary(entries)
            }
            if peek == nil {
                throw failure("the file ends inside the <dict> that starts on line \(tag.line)", expected: "</dict>")
            }
            guard peek == UInt8(ascii: "<") else {
                throw failure("expected <key> or </dict>, found \(describeByte(peek))")
            }
            let keyTag = try readStartTag()
            guard keyTag.name == "key" else {
                throw failure(
                    "expected <key> or </dict>, found <\(keyTag.name)>: every value in a <dict> follows a <key>",
                    at: keyTag)
            }
            let key = try readText(of: keyTag)
            try skipMisc()
            // Another <key>, the end of the <dict> or the end of the file: the fault is the key's, so it is
            // reported on the key's line rather than as a stray element further down.
            if peek == nil || startsWith("</") || startsWith("<key>") || startsWith("<key/>") {
                let next = peek == nil ? "the end of the file" : startsWith("</") ? "</dict>" : "<key>"
                throw ParseFailure.keyWithoutValue(
                    key, path: path, line: keyTag.line, column: keyTag.column, found: next, expected: Self.valueElements
                )
            }
            path.push(key: key)
            let value = try parseValue(depth: depth)
            path.pop()
            entries.append(ConfigNode.Entry(key: key, line: keyTag.line, column: keyTag.column, value: value))
        }
    }

    // MARK: - Tags and text

    private mutating func readStartTag() throws(ParseFailure) -> Tag {
        let tagLine = line
        let tagColumn = columns.column(at: index, lineStart: lineStart, in: bytes)
        consume()  // <
        let name = readName()
        guard !name.isEmpty else {
            throw failure("expected an element name after '<', found \(describeByte(peek))")
        }
        while true {
            while let byte = peek, isJSONWhitespace(byte) { consume() }
            if startsWith("/>") {
                consume()
                consume()
                return Tag(name: name, isSelfClosing: true, line: tagLine, column: tagColumn)
            }
            if peek == UInt8(ascii: ">") {
                consume()
                return Tag(name: name, isSelfClosing: false, line: tagLine, column: tagColumn)
            }
            try skipAttribute(of: name)
        }
    }

    private mutating func skipAttribute(of element: String) throws(ParseFailure) {
        guard !readName().isEmpty else {
            throw failure("expected an attribute, '>' or '/>' in <\(element)>, found \(describeByte(peek))")
        }
        while let byte = peek, isJSONWhitespace(byte) { consume() }
        guard peek == UInt8(ascii: "=") else {
            throw failure("expected '=' after an attribute name in <\(element)>, found \(describeByte(peek))")
        }
        consume()
        while let byte = peek, isJSONWhitespace(byte) { consume() }
        guard let quote = peek, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
            throw failure("expected a quoted attribute value in <\(element)>, found \(describeByte(peek))")
        }
        consume()
        while let byte = peek, byte != quote {
            if byte == UInt8(ascii: "<") {
                throw failure("'<' inside an attribute value of <\(element)>")
            }
            consume()
        }
        guard peek != nil else { throw failure("the file ends inside a tag <\(element)>", expected: "'>'") }
        consume()
    }

    private mutating func readName() -> String {
        let start = index
        while let byte = peek, Self.isNameByte(byte) { consume() }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: ":"):
            true
        default: byte >= 0x80
        }
    }

    private mutating func expectEndTag(_ name: String) throws(ParseFailure) {
        guard startsWith("</") else {
            throw failure("expected </\(name)>, found \(describeByte(peek))")
        }
        let tagLine = line
        let tagColumn = columns.column(at: index, lineStart: lineStart, in: bytes)
        consume()
        consume()
        let found = readName()
        while let byte = peek, isJSONWhitespace(byte) { consume() }
        guard found == name, peek == UInt8(ascii: ">") else {
            let shown = "</\(found)" + (peek == UInt8(ascii: ">") ? ">" : "…")
            throw failure(
                "expected </\(name)>, found \(shown)", line: tagLine, column: tagColumn, expected: "</\(name)>")
        }
        consume()
    }

    /// The text of a simple element up to its end tag, with entities, character references and CDATA resolved.
    private mutating func readText(of tag: Tag) throws(ParseFailure) -> String {
        if tag.isSelfClosing { return "" }
        var text: [UInt8] = []
        while true {
            guard let byte = peek else {
                throw failure(
                    "the file ends inside the <\(tag.name)> that starts on line \(tag.line)", expected: "</\(tag.name)>"
                )
            }
            switch byte {
            case UInt8(ascii: "<"):
                if startsWith("</") {
                    try expectEndTag(tag.name)
                    return String(decoding: text, as: UTF8.self)
                } else if startsWith("<![CDATA[") {
                    let startLine = line
                    for _ in 0..<9 { consume() }
                    while !startsWith("]]>") {
                        guard let inner = peek else {
                            throw failure(
                                "the file ends inside a CDATA section that starts on line \(startLine)",
                                expected: "']]>'")
                        }
                        try checkCharacter(inner)
                        text.append(inner)
                        consume()
                    }
                    for _ in 0..<3 { consume() }
                } else if startsWith("<!--") {
                    try skipComment()
                } else {
                    let elementColumn = column
                    consume()
                    let name = readName()
                    throw failure(
                        "element <\(name)> inside <\(tag.name)>", line: line, column: elementColumn,
                        expected: "text and then </\(tag.name)>")
                }
            case UInt8(ascii: "&"):
                try readReference(into: &text)
            case 0x0D:
                // XML reads CR LF and a lone CR as LF.
                consume()
                if peek == 0x0A { consume() }
                text.append(0x0A)
            default:
                try checkCharacter(byte)
                text.append(byte)
                consume()
            }
        }
    }

    private func checkCharacter(_ byte: UInt8) throws(ParseFailure) {
        if byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D {
            throw ParseFailure(
                .syntaxError, line: line, column: column,
                "the control character \(describeByte(byte)) is not allowed in XML",
                found: describeByte(byte), expected: "text")
        }
    }

    private mutating func readReference(into text: inout [UInt8]) throws(ParseFailure) {
        let start = index
        let startLine = line
        let startLineStart = lineStart
        let startColumn = columns.column(at: index, lineStart: lineStart, in: bytes)
        consume()  // &
        var name: [UInt8] = []
        while let byte = peek, byte != UInt8(ascii: ";"), name.count < 12 {
            name.append(byte)
            consume()
        }
        let reference = String(decoding: name, as: UTF8.self)
        guard peek == UInt8(ascii: ";") else {
            index = start
            line = startLine
            lineStart = startLineStart
            throw failure("'&' does not start an entity such as &amp;", expected: "&amp; for a literal '&'")
        }
        consume()
        switch reference {
        case "lt": text.append(UInt8(ascii: "<"))
        case "gt": text.append(UInt8(ascii: ">"))
        case "amp": text.append(UInt8(ascii: "&"))
        case "quot": text.append(UInt8(ascii: "\""))
        case "apos": text.append(UInt8(ascii: "'"))
        default:
            var value: UInt32?
            if reference.hasPrefix("#x") {
                value = UInt32(reference.dropFirst(2), radix: 16)
            } else if reference.hasPrefix("#") {
                value = UInt32(reference.dropFirst(), radix: 10)
            } else {
                throw failure(
                    "unknown entity &\(reference);", line: startLine, column: startColumn,
                    expected: "&lt; &gt; &amp; &quot; &apos; or &#…;")
            }
            guard let value, Self.isXMLCharacter(value), let scalar = Unicode.Scalar(value) else {
                throw failure(
                    "&\(reference); is not a character XML allows", line: startLine, column: startColumn)
            }
            text.append(contentsOf: Array(String(scalar).utf8))
        }
    }

    private static func isXMLCharacter(_ value: UInt32) -> Bool {
        value == 0x9 || value == 0xA || value == 0xD || (0x20...0xD7FF).contains(value)
            || (0xE000...0xFFFD).contains(value) || (0x10000...0x10FFFF).contains(value)
    }

    // MARK: - Bytes

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func startsWith(_ prefix: StaticString) -> Bool {
        prefix.withUTF8Buffer { startsWith($0) }
    }

    private func startsWith(_ prefix: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count - index >= prefix.count else { return false }
        for offset in 0..<prefix.count where bytes[index + offset] != prefix[offset] { return false }
        return true
    }

    private mutating func consume() {
        let byte = bytes[index]
        index += 1
        if byte == 0x0A || (byte == 0x0D && peek != 0x0A) {
            line += 1
            lineStart = index
        }
    }

    /// The column of the byte under the cursor, from 1, in characters (Unicode scalars), for the one place of an
    /// error; the tags of a long line are placed by ``columns``.
    private var column: Int {
        var columns = CharacterColumns()
        return columns.column(at: index, lineStart: lineStart, in: bytes)
    }

    /// A syntax error at the cursor, or at `line` and `column` when given.
    private func failure(
        _ message: String, line: Int? = nil, column: Int? = nil, expected: String? = nil
    ) -> ParseFailure {
        ParseFailure(
            .syntaxError, line: line ?? self.line, column: line == nil ? self.column : column, message,
            found: describeByte(peek), expected: expected)
    }

    /// A syntax error placed at `tag`.
    private func failure(_ message: String, at tag: Tag, expected: String? = nil) -> ParseFailure {
        failure(message, line: tag.line, column: tag.column, expected: expected)
    }
}

extension ConfigNode {
    /// A value whose element starts with `tag`, placed at the tag's `<`.
    fileprivate init(_ value: Value, at tag: XMLPlistParser.Tag) {
        self.init(value, line: tag.line, column: tag.column)
    }
}

import FeatureGate

/// The file formats a config can be written in.
public enum ConfigFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// An XML property list (`<?xml …?>` or `<plist>`), as Xcode writes `AirshipConfig.plist`.
    case xml
    /// A binary property list (`bplist00`).
    case binary
    /// A JSON object.
    case json
    /// An old-style ASCII property list, the OpenStep text format: `{ enabledFeatures = (push); }`.
    ///
    /// It has strings, data (`<0fbd>`), arrays and dictionaries, and no numbers, booleans or dates: `YES`, `NO`
    /// and `42` are strings, as Apple's reader reads them.
    case openStep = "openstep"
    /// A Java `.properties` file, as Airship Android reads `airshipconfig.properties`: `enabledFeatures = push,
    /// analytics`. Read with `java.util.Properties` rules (ISO-8859-1, `#`/`!` comments, `=`/`:`/blank separators,
    /// continuation lines, `\uXXXX` escapes). Chosen by a `.properties` file name, or content starting with a `#` or
    /// `!` comment; never written.
    case properties

    /// `xml`, `binary`, `json`, `openstep` or `properties`.
    public var description: String { rawValue }

    /// The format the content is in, judged from its first bytes, whatever the file is called.
    ///
    /// `bplist` is binary; `#` or `!` (a comment) is a `.properties` file; `<` (after an optional UTF-8 byte order mark and whitespace) is XML; `[` is JSON; `{` is
    /// JSON unless what follows it is only an old-style plist's (a comment, or a key, quoted or not, and `=`). `(`, a quoted string, a comment, or an unquoted word followed by `=` is an old-style plist.
    /// Anything else is `nil`.
    public static func detect<Bytes: Collection<UInt8>>(in bytes: Bytes) -> ConfigFormat? {
        var rest = bytes[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        if rest.starts(with: Array("bplist".utf8)) { return .binary }
        rest = rest.drop(while: isJSONWhitespace)
        guard let first = rest.first else { return nil }
        switch first {
        case UInt8(ascii: "<"): return .xml
        case UInt8(ascii: "["): return .json
        case UInt8(ascii: "("), UInt8(ascii: "\""), UInt8(ascii: "'"): return .openStep
        case UInt8(ascii: "#"), UInt8(ascii: "!"): return .properties
        case UInt8(ascii: "/"): return startsComment(rest) ? .openStep : nil
        case UInt8(ascii: "{"): return objectFormat(after: rest.dropFirst())
        default:
            guard isUnquotedStringByte(first) else { return nil }
            return skipSpaceAndComments(rest.drop(while: isUnquotedStringByte)).first == UInt8(ascii: "=")
                ? .openStep : nil
        }
    }

    /// JSON or an old-style plist, from what follows a `{`: a JSON object starts with `}` or a quoted key and `:`.
    private static func objectFormat<Rest: Collection<UInt8>>(after open: Rest) -> ConfigFormat {
        let rest = skipSpaceAndComments(open)
        guard let first = rest.first else { return .json }
        if startsComment(open.drop(while: isJSONWhitespace)) { return .openStep }
        if isUnquotedStringByte(first) {
            // `{ key = …` is an old-style plist; `{key: …` is JSON with a key left unquoted, reported as such.
            return skipSpaceAndComments(rest.drop(while: isUnquotedStringByte)).first == UInt8(ascii: "=")
                ? .openStep : .json
        }
        guard first == UInt8(ascii: "\"") else { return .json }
        // Past the quoted key (escapes included), JSON has ':' and an old-style plist '='.
        var index = rest.index(after: rest.startIndex)
        var escaped = false
        while index < rest.endIndex {
            let byte = rest[index]
            index = rest.index(after: index)
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                break
            }
        }
        return skipSpaceAndComments(rest[index...]).first == UInt8(ascii: "=") ? .openStep : .json
    }

    private static func startsComment<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        bytes.starts(with: [UInt8(ascii: "/"), UInt8(ascii: "*")])
            || bytes.starts(with: [UInt8(ascii: "/"), UInt8(ascii: "/")])
    }

    /// `bytes` past leading whitespace and old-style plist comments; an unterminated comment leaves nothing.
    private static func skipSpaceAndComments<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bytes.SubSequence {
        var rest = bytes[...]
        while true {
            rest = rest.drop(while: isJSONWhitespace)
            if rest.starts(with: [UInt8(ascii: "/"), UInt8(ascii: "/")]) {
                rest = rest.drop { $0 != 0x0A && $0 != 0x0D }
            } else if rest.starts(with: [UInt8(ascii: "/"), UInt8(ascii: "*")]) {
                rest = rest.dropFirst(2)
                while !rest.isEmpty && !rest.starts(with: [UInt8(ascii: "*"), UInt8(ascii: "/")]) {
                    rest = rest.dropFirst()
                }
                rest = rest.dropFirst(2)
            } else {
                return rest
            }
        }
    }
}

/// Space, tab, line feed and carriage return: the whitespace of JSON and of XML.
@inline(__always)
package func isJSONWhitespace(_ byte: UInt8) -> Bool { TextCursor.isWhitespace(byte) }

/// The bytes an old-style plist string may hold without quotes: letters, digits and `_$+/:.-`.
@inline(__always)
package func isUnquotedStringByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "+"),
        UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "-"):
        true
    default: false
    }
}

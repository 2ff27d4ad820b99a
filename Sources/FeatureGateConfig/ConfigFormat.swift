/// The file formats a config can be written in.
public enum ConfigFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// An XML property list (`<?xml …?>` or `<plist>`), as Xcode writes `AirshipConfig.plist`.
    case xml
    /// A binary property list (`bplist00`).
    case binary
    /// A JSON object.
    case json

    /// `xml`, `binary` or `json`.
    public var description: String { rawValue }

    /// The format the content is in, judged from its first bytes, whatever the file is called.
    ///
    /// `bplist` is binary; `<` (after an optional UTF-8 byte order mark and whitespace) is XML; `{` or `[` is
    /// JSON. Anything else is `nil`.
    public static func detect<Bytes: Collection<UInt8>>(in bytes: Bytes) -> ConfigFormat? {
        var rest = bytes[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        if rest.starts(with: Array("bplist".utf8)) { return .binary }
        guard let first = rest.first(where: { !isJSONWhitespace($0) }) else { return nil }
        switch first {
        case UInt8(ascii: "<"): return .xml
        case UInt8(ascii: "{"), UInt8(ascii: "["): return .json
        default: return nil
        }
    }
}

/// Space, tab, line feed and carriage return: the whitespace of JSON and of XML.
@inline(__always)
package func isJSONWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
}

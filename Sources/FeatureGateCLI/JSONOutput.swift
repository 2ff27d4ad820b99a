import FeatureGateConfig

/// One JSON value as the tool prints it. Every command's `--json` output is built from these and printed by
/// `Console.out(_:)`, so all of it is written one way: compact, members in the order given (the order the help
/// lists), strings escaped as the config writer escapes them, numbers as Swift writes them.
indirect enum JSONOutput {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null
    case array([JSONOutput])
    case object([(String, JSONOutput)])

    /// A string, or `null` for `nil`.
    static func stringOrNull(_ text: String?) -> JSONOutput { text.map(JSONOutput.string) ?? .null }

    /// An array of strings.
    static func strings(_ texts: [String]) -> JSONOutput { .array(texts.map(JSONOutput.string)) }

    /// The value's JSON text, on one line.
    var text: String {
        switch self {
        case .string(let text): ConfigDocumentWriter.jsonString(text)
        case .int(let value): "\(value)"
        case .double(let value): "\(value)"
        case .bool(let value): "\(value)"
        case .null: "null"
        case .array(let items): "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let members):
            "{" + members.map { ConfigDocumentWriter.jsonString($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }
}

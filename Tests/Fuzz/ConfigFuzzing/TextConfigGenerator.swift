/// Turns fuzz bytes into an XML plist, a JSON config or an old-style (OpenStep) plist whose values stress the
/// parsers.
///
/// The document is a dictionary with `enabledFeatures` (and sometimes `resetEnabledFeatures` and other keys);
/// values are names, arrays of names, booleans, nested containers (sometimes past the depth limit) and numbers
/// written every way the formats allow and a few they do not: huge exponents, `-0`, NaN and infinity spellings,
/// leading zeros, hex, 30-digit integers, entity-encoded digits. Old-style plists get bare and quoted strings
/// with every kind of escape, `<hex data>`, both kinds of comment, trailing commas, the braceless top level, and
/// now and then a broken piece: a missing `;`, a key without a value, an unterminated string or comment.
package struct TextConfigGenerator {
    /// The text format to write.
    package enum Syntax {
        case xml, json, openStep
    }

    private var input: FuzzInput
    private let syntax: Syntax
    private var isXML: Bool { syntax == .xml }

    /// Number texts for JSON.
    package static let jsonNumbers: [String] = [
        "0", "-0", "4", "16", "373", "1e400", "-1e400", "1E-400", "4.0", "0.4e1", "-0.0", "1.5",
        "18446744073709551615", "18446744073709551616", "-9223372036854775808", "-9223372036854775809",
        "123456789012345678901234567890", "00", "01", "-", "1.", ".5", "+1", "0x10", "NaN", "Infinity", "-Infinity",
        "1e", "1e+", "2.2250738585072011e-308", "4.9e-324", "1.7976931348623157e308",
        "1" + String(repeating: "0", count: 400),
    ]

    /// Texts for `<integer>`, `<real>` and `<date>`.
    package static let xmlNumbers: [String] = [
        "0", "-0", "4", "+4", " 4 ", "0x4", "&#x34;", "&#52;", "4\n", "16", "373", "18446744073709551615",
        "18446744073709551616", "-9223372036854775809", "99999999999999999999999999999999", "", "nan", "NaN", "-nan",
        "inf", "-infinity", "1e99999", "-1e-99999", "0x1p3", "4.9e-324", "1.7976931348623157e308", "1e309", "4.0",
        " 1.5 ", "2001-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "garbage",
    ]

    /// Old-style plist strings: bare, quoted, escaped, and a few that are broken.
    package static let openStepStrings: [String] = [
        "push", "\"push\"", "'analytics'", "\"in_app_automation\"", "PUSH", "YES", "NO", "42", "-1.5e3",
        "a/b:c.d-e$f+g", "\"push, analytics\"", "\" push \"", "\"\"", "\"\\U0070ush\"", "\"\\160ush\"",
        "\"\\UD83D\\UDE00\"", "\"\\UD800\"", "\"\\351\"", "\"a\\\"b\"", "\"multi\nline\"",
        "\"tab\\t\\n\\a\\v\\q\"", "<0fbd 7778>", "<>", "<0f1>", "<zz>",
        "\"unterminated", "chat", "location", "all", "none", "crash_reports", "\"é中😀\"",
    ]

    /// Builds one config in `syntax`.
    package static func generate(_ input: inout FuzzInput, syntax: Syntax) -> [UInt8] {
        var generator = TextConfigGenerator(input: input, syntax: syntax)
        let text = generator.document()
        input = generator.input
        return Array(text.utf8)
    }

    private init(input: FuzzInput, syntax: Syntax) {
        self.input = input
        self.syntax = syntax
    }

    private mutating func document() -> String {
        if syntax == .openStep { return openStepDocument() }
        var entries = [("enabledFeatures", value(depth: 0))]
        while input.chance(35) {
            let key = input.chance(50) ? "resetEnabledFeatures" : input.pick(InterestingNumbers.strings)
            entries.append((key, value(depth: 1)))
        }
        if input.chance(50) { entries.reverse() }
        if isXML {
            let body = entries.map { "<key>\($0.0)</key>\(space())\($0.1)" }.joined(separator: space())
            let prolog = input.chance(80) ? "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" : ""
            return prolog + "<plist version=\"1.0\">\n<dict>\(space())\(body)\(space())</dict>\n</plist>\n"
        }
        let body = entries.map { "\"\($0.0)\":\(space())\($0.1)" }.joined(separator: ",\(space())")
        return "{\(space())\(body)\(space())}"
    }

    private mutating func space() -> String { input.pick(["", " ", "\n", "\t", "  \n  "]) }

    private mutating func value(depth: Int) -> String {
        switch input.below(10) {
        case 0, 1, 2: return number()
        case 3: return string(input.pick(InterestingNumbers.strings))
        case 4: return isXML ? (input.chance(50) ? "<true/>" : "<false/>") : input.pick(["true", "false", "null"])
        case 5 where depth < 8:
            let count = input.below(6)
            let elements = (0..<count).map { _ in value(depth: depth + 1) }
            return isXML
                ? "<array>" + elements.joined() + "</array>"
                : "[" + elements.joined(separator: ",\(space())") + "]"
        case 6 where depth < 8:
            let count = input.below(4)
            let entries = (0..<count).map { _ in (input.pick(InterestingNumbers.strings), value(depth: depth + 1)) }
            return isXML
                ? "<dict>" + entries.map { "<key>\($0.0)</key>\($0.1)" }.joined() + "</dict>"
                : "{" + entries.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ",") + "}"
        case 7:
            // Nesting past the depth limit, or just under it.
            let levels = input.pick([63, 64, 65, 255, 256, 257, 1_000])
            let (open, close) = isXML ? ("<array>", "</array>") : ("[", "]")
            return String(repeating: open, count: levels) + number() + String(repeating: close, count: levels)
        default:
            let names = (0..<input.below(5)).map { _ in string(input.pick(InterestingNumbers.strings)) }
            return isXML
                ? "<array>" + names.joined() + "</array>" : "[" + names.joined(separator: ",") + "]"
        }
    }

    private mutating func number() -> String {
        var text = isXML ? input.pick(Self.xmlNumbers) : input.pick(Self.jsonNumbers)
        if input.chance(15) { text = "-" + text }
        if input.chance(15) { text += input.pick(["e5", "E-5", "e+999999999999", ".0", "0", "9"]) }
        guard isXML else { return text }
        let tag = input.pick(["integer", "integer", "real", "real", "date"])
        return "<\(tag)>\(text)</\(tag)>"
    }

    private mutating func string(_ text: String) -> String { isXML ? "<string>\(text)</string>" : "\"\(text)\"" }

    // MARK: - Old-style plists

    private mutating func openStepDocument() -> String {
        var entries = [("enabledFeatures", openStepValue(depth: 0))]
        while input.chance(35) {
            let key = input.chance(50) ? "resetEnabledFeatures" : openStepKey()
            entries.append((key, openStepValue(depth: 1)))
        }
        if input.chance(50) { entries.reverse() }
        let body = entries.map { openStepEntry($0.0, $0.1) }.joined(separator: gap())
        // Now and then the top level is a dictionary's contents without the braces, as in a .strings file.
        return input.chance(10) ? gap() + body + gap() : gap() + "{" + gap() + body + gap() + "}" + gap()
    }

    private mutating func openStepKey() -> String {
        let key = input.pick(InterestingNumbers.strings)
        return input.chance(50) || key.isEmpty || key.contains(" ") || key.contains(",") ? "\"\(key)\"" : key
    }

    /// `key = value;`, or now and then a broken entry: no value, no '=', no ';'.
    private mutating func openStepEntry(_ key: String, _ value: String) -> String {
        guard input.chance(5) else { return "\(key)\(gap()) =\(gap())\(value);" }
        return input.pick(["\(key);", "\(key) = ;", "\(key) = \(value)", "\(key) \(value);"])
    }

    /// Whitespace and comments, including (rarely) one that never ends.
    private mutating func gap() -> String {
        input.chance(2)
            ? "/* open" : input.pick(["", " ", "\n", "\t", " /* c */ ", "// c\n", "\n/* a\nb */\n", "\r\n"])
    }

    private mutating func openStepValue(depth: Int) -> String {
        switch input.below(8) {
        case 0, 1, 2: return input.pick(Self.openStepStrings)
        case 3 where depth < 8:
            let elements = (0..<input.below(6)).map { _ in openStepValue(depth: depth + 1) }
            return "(" + elements.joined(separator: "," + gap()) + (input.chance(30) ? ",)" : ")")
        case 4 where depth < 8:
            let entries = (0..<input.below(4)).map { _ in
                openStepEntry(openStepKey(), openStepValue(depth: depth + 1))
            }
            return "{" + entries.joined(separator: gap()) + "}"
        case 5:
            let levels = input.pick([63, 64, 65, 255, 256, 257, 1_000])
            return String(repeating: "(", count: levels) + "push" + String(repeating: ")", count: levels)
        default:
            let names = (0..<input.below(5)).map { _ in input.pick(Self.openStepStrings) }
            return "(" + names.joined(separator: ", ") + ")"
        }
    }
}

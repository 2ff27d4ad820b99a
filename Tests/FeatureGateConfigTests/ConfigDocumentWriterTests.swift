import FeatureGate
import FeatureGateConfig
import Foundation
import PackageTestSupport
import Testing

/// Whole documents written in every format: each value keeps its type, or the conversion fails naming it.
@Suite struct ConfigDocumentWriterTests {
    /// Whether a format can hold every value of `value`, judged independently of the writer.
    private func fits(_ value: GeneratedValue, in format: ConfigFormat) -> Bool {
        if format == .properties {
            // One line of text per key: a string, or (enabledFeatures) names.
            guard case .dictionary(let entries) = value else { return false }
            return entries.allSatisfy { key, value in
                if case .string = value { return true }
                return key == "enabledFeatures"
            }
        }
        return switch value {
        case .array(let elements): elements.allSatisfy { fits($0, in: format) }
        case .dictionary(let entries): entries.allSatisfy { fits($0.1, in: format) }
        case .string, .data: format != .json || !isData(value)
        case .date: format == .xml || format == .binary
        default: format != .openStep
        }
    }

    private func isData(_ value: GeneratedValue) -> Bool { if case .data = value { true } else { false } }

    /// `tree` with an empty `enabledFeatures` written as `["none"]`.
    private func namingNone(_ tree: ConfigNode) -> ConfigNode {
        guard case .dictionary(var entries) = tree.value else { return tree }
        for index in entries.indices where entries[index].key == "enabledFeatures" {
            if case .array(let names) = entries[index].value.value, names.isEmpty {
                entries[index].value = ConfigNode(.array([ConfigNode(.string("none"))]))
            }
        }
        return ConfigNode(.dictionary(entries))
    }

    @Test func randomDocumentsConvertToEveryFormatAndBackUnchangedOrFailNamingTheValue() throws {
        var generator = SeededGenerator(seed: 0xC0_0000)
        var written = 0
        var refused = 0
        for _ in 0..<250 {
            let document = GeneratedValue.dictionary([
                ("k", generator.value(depth: 4)), ("enabledFeatures", .array([])),
            ])
            let (_, tree) = try ConfigReader().parse(bytes: [UInt8](binaryPlist(document.object)), source: "d")
            for format in ConfigFormat.allCases {
                do {
                    let bytes = try ConfigDocumentWriter.data(for: tree, as: format)
                    let (readFormat, again) = try ConfigReader().parse(bytes: bytes, source: "d")
                    #expect(readFormat == format)
                    // A .properties file writes an empty enabledFeatures as `none`.
                    let expected = format == .properties ? namingNone(tree) : tree
                    #expect(
                        canonical(again) == canonical(expected), "\(format): \(String(decoding: bytes, as: UTF8.self))")
                    #expect(fits(document, in: format), "\(format) wrote what it cannot hold")
                    if format == .xml || format == .binary || format == .openStep {
                        // Foundation reads the same tree from it.
                        let object = try PropertyListSerialization.propertyList(from: Data(bytes), format: nil)
                        let theirs = try FoundationValueBridge.node(from: object, limits: .default)
                        #expect(canonical(theirs) == canonical(tree))
                    }
                    written += 1
                } catch let failure as ConfigDocumentWriter.Unrepresentable {
                    #expect(!fits(document, in: format), "\(format) refused \(failure.found) at \(failure.keyPath)")
                    #expect(failure.keyPath.hasPrefix("k"))
                    refused += 1
                }
            }
        }
        #expect(written > 300)
        #expect(refused > 150)
    }

    @Test func aDateInJSONIsAnErrorThatNamesItsKeyPathAndLine() throws {
        let text = plist(
            "<key>enabledFeatures</key><array/>\n<key>list</key><array><string>a</string>\n<date>2024-05-01T12:00:00Z</date></array>"
        )
        let (_, tree) = try ConfigReader().parse(bytes: Array(text.utf8), source: "c")
        #expect {
            try ConfigDocumentWriter.data(for: tree, as: .json)
        } throws: { error in
            let diagnostic = (error as! ConfigDocumentWriter.Unrepresentable).diagnostic(source: "c")
            return diagnostic.description
                == "c: error: list[1]: line 6: cannot write date 2024-05-01T12:00:00Z as JSON: JSON has no dates; "
                + "nothing was written" && diagnostic.kind == .unconvertibleValue
        }
    }

    @Test func aStringXMLCannotHoldIsNamedByItsKeyWithoutEchoingIt() throws {
        let text = "{\"enabledFeatures\": [],\n\"developmentAppSecret\": \"s3cr\\u0001t\"}"
        let (_, tree) = try ConfigReader().parse(bytes: Array(text.utf8), source: "c")
        #expect {
            try ConfigDocumentWriter.data(for: tree, as: .xml)
        } throws: { error in
            (error as! ConfigDocumentWriter.Unrepresentable).diagnostic(source: "c").description
                == "c: error: developmentAppSecret: line 2: cannot write a string of 6 characters as an XML plist: XML "
                + "cannot hold control characters other than tab and line breaks; nothing was written"
        }
        // The same string is fine in JSON and in a binary plist.
        for format in [ConfigFormat.json, .binary] {
            let bytes = try ConfigDocumentWriter.data(for: tree, as: format)
            #expect(canonical(try ConfigReader().parse(bytes: bytes, source: "c").1) == canonical(tree))
        }
    }

    @Test func anOldStylePlistQuotesEveryStringAReaderWouldTakeForAComment() throws {
        // Found by the config fuzzer: `//nabled$$$$Features = x;` reads back as a comment, and the key is lost.
        for string in ["//nabled$$$$Features", "/*x", "a//b", "a/*b*/", "/"] {
            let text = #"{"enabledFeatures": [], "\#(string)": "\#(string)", "list": ["\#(string)"]}"#
            let (_, tree) = try ConfigReader().parse(bytes: Array(text.utf8), source: "c")
            let bytes = try ConfigDocumentWriter.data(for: tree, as: .openStep)
            let (_, again) = try ConfigReader().parse(bytes: bytes, source: "c")
            #expect(canonical(again) == canonical(tree), "\(String(decoding: bytes, as: UTF8.self))")
            // Foundation reads the same tree from it.
            let object = try PropertyListSerialization.propertyList(from: Data(bytes), format: nil)
            #expect(canonical(try FoundationValueBridge.node(from: object, limits: .default)) == canonical(tree))
        }
    }

    @Test func theCanonicalFormReplacesFeatureGateKeysInPlaceAndAddsMissingOnes() throws {
        let text = #"{"site": "EU", "enabledFeatures": "push, analytics", "nested": {"enabledFeatures": "x"}}"#
        let (_, tree) = try ConfigReader().parse(bytes: Array(text.utf8), source: "c")
        let configuration = PrivacyConfiguration(enabledFeatures: [.push, .analytics])
        let document = ConfigWriter.document(tree, with: configuration, catalog: .builtIn, format: .json)
        #expect(
            String(decoding: try ConfigDocumentWriter.data(for: document, as: .json), as: UTF8.self) == """
                {
                  "site": "EU",
                  "enabledFeatures": [
                    "analytics",
                    "push"
                  ],
                  "nested": {
                    "enabledFeatures": "x"
                  },
                  "resetEnabledFeatures": false
                }

                """)
        let openStep = ConfigWriter.document(tree, with: configuration, catalog: .builtIn, format: .openStep)
        #expect(
            try String(decoding: ConfigDocumentWriter.data(for: openStep, as: .openStep), as: UTF8.self)
                .contains("resetEnabledFeatures = NO;"))
    }
}

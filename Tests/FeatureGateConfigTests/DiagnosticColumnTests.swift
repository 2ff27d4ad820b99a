import FeatureGate
import FeatureGateConfig
import Foundation
import Testing

/// Every text format places a diagnostic on its line and 1-based column: at the value it is about, or at the key for a
/// problem with a key (an XML element's `<`); columns count characters. A binary plist has neither.
@Suite struct DiagnosticColumnTests {
    /// The place of each diagnostic reading `text` gives, in order: key path, line, column.
    private func places(_ text: String, _ mode: ConfigReadingMode = .strict) -> [Place] {
        let diagnostics: [ConfigDiagnostic]
        do {
            diagnostics = try ConfigReader(mode: mode).read(Data(text.utf8), sourceName: "c").warnings
        } catch {
            diagnostics = error.diagnostics
        }
        return diagnostics.map { Place(keyPath: $0.keyPath, line: $0.line, column: $0.column) }
    }

    private struct Place: Equatable, CustomStringConvertible {
        var keyPath: String
        var line: Int?
        var column: Int?
        var description: String { "\(keyPath)@\(line.map(String.init) ?? "-"):\(column.map(String.init) ?? "-")" }
    }

    @Test func aJSONValueIsPlacedWhereItStarts() {
        let text = """
            {
              "enabledFeatures": ["push", "anlytics"],
              "resetEnabledFeatures": "YES"
            }
            """
        #expect(
            places(text) == [
                Place(keyPath: "enabledFeatures[1]", line: 2, column: 31),
                Place(keyPath: "resetEnabledFeatures", line: 3, column: 27),
            ])
    }

    @Test func anXMLPlistValueIsPlacedAtItsElement() {
        let text = plist(
            """
            \t<key>enabledFeatures</key>
            \t<array>
            \t\t<string>push</string>  <string>anlytics</string>
            \t</array>
            \t<key>resetEnabledFeatures</key> <string>YES</string>
            """)
        // plist(_:) puts the body from line 4 on.
        #expect(
            places(text) == [
                Place(keyPath: "enabledFeatures[1]", line: 6, column: 26),
                Place(keyPath: "resetEnabledFeatures", line: 8, column: 34),
            ])
    }

    @Test func anOldStylePlistValueIsPlacedWhereItStarts() {
        #expect(
            places(#"{ enabledFeatures = (push, "é", anlytics); }"#) == [
                Place(keyPath: "enabledFeatures[1]", line: 1, column: 28),
                Place(keyPath: "enabledFeatures[2]", line: 1, column: 33),
            ])
    }

    @Test func aProblemWithAKeyIsPlacedAtTheKey() {
        #expect(
            places("{\n  \"enabledFeatures\": [],\n  \"EnabledFeatures\": [\"push\"]\n}") == [
                Place(keyPath: "EnabledFeatures", line: 3, column: 3)
            ])
        #expect(
            places(plist("<key>EnabledFeatures</key>\n  <array/>")) == [
                Place(keyPath: "EnabledFeatures", line: 4, column: 1)
            ])
        // The second of two keys is the one reported.
        #expect(
            places(#"{"enabledFeatures": [], "resetEnabledFeatures": false, "enabledFeatures": []}"#) == [
                Place(keyPath: "enabledFeatures", line: 1, column: 56)
            ])
    }

    @Test func aNestedKeyPathIsPlacedToo() {
        let text = """
            {
              "enabledFeatures": [],
              "consentPolicy": {"version": 1, "categories": {"ads": {"features": ["pus"]}}}
            }
            """
        let place = places(text).first
        #expect(place?.line == 3)
        #expect(place?.column == 71)
    }

    @Test func columnsCountCharactersNotBytes() {
        // "é" and "日本" are 2 and 6 bytes of UTF-8 but 1 and 2 characters.
        #expect(places(#"{"enabledFeatures": ["é", "日本", "pus"]}"#).last?.column == 33)
        // A syntax error after them too.
        let syntax = places(#"{"é": "日本" "enabledFeatures": []}"#)
        #expect(syntax == [Place(keyPath: ConfigDiagnostic.rootKeyPath, line: 1, column: 12)])
        #expect(places("<?xml version=\"1.0\"?>\n<plist><dict><key>é</key><bogus/></dict></plist>").first?.column == 26)
    }

    @Test func xmlSyntaxErrorsHaveAColumn() {
        let text = plist("<key>enabledFeatures</key>\n  <array><string>push</string></arry>")
        let failure = places(text)
        #expect(failure.first?.line == 5)
        #expect(failure.first?.column == 31)
    }

    @Test func aBinaryPlistHasNoPlace() {
        let result = outcome(binaryPlist(["enabledFeatures": ["anlytics"]]))
        #expect(!result.isValid)
        let error = readError(binaryPlist(["enabledFeatures": ["anlytics"]]))
        #expect(error?.diagnostics.map(\.line) == [nil])
        #expect(error?.diagnostics.map(\.column) == [nil])
    }
}

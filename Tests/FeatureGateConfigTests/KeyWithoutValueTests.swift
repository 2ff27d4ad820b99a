import FeatureGateConfig
import Foundation
import Testing

/// A key followed by no value, anywhere in a dictionary and in every text format, is an error that names the key
/// and gives its line, not an error about whatever comes next.
@Suite struct KeyWithoutValueTests {
    @Test(arguments: [
        // XML: another key next, as in a template with a value left out.
        (
            plist("<key>developmentAppKey</key>\n<key>enabledFeatures</key>\n<array/>"),
            #"c: error: developmentAppKey: line 4, column 1: the key "developmentAppKey" has no value (found <key> after it)"#
        ),
        // XML: the end of the dictionary next.
        (
            plist("<key>enabledFeatures</key>\n<array/>\n<key>site</key>"),
            #"c: error: site: line 6, column 1: the key "site" has no value (found </dict> after it)"#
        ),
        // XML: inside a nested dictionary inside an array.
        (
            plist(
                "<key>enabledFeatures</key><array/>\n<key>extra</key><array><dict>\n<key>inner</key>\n</dict></array>"),
            #"c: error: extra[0].inner: line 6, column 1: the key "inner" has no value (found </dict> after it)"#
        ),
        // XML: the end of the file next.
        (
            "<plist><dict>\n<key>enabledFeatures</key>",
            #"c: error: enabledFeatures: line 2, column 1: the key "enabledFeatures" has no value (found the end of the file after it)"#
        ),
        // JSON: a comma or a closing brace next, with or without the colon.
        (
            "{\n  \"site\": ,\n  \"enabledFeatures\": []\n}",
            #"c: error: site: line 2, column 3: the key "site" has no value (found ',' after it)"#
        ),
        (
            "{\"enabledFeatures\": [], \"a\": {\"b\"}}",
            #"c: error: a.b: line 1, column 31: the key "b" has no value (found '}' after it)"#
        ),
        // Old-style plists: `key;` (which Apple reads as key = key), `key = ;` and a key at the end.
        (
            "{\n  enabledFeatures = ();\n  developmentAppKey;\n}",
            #"c: error: developmentAppKey: line 3, column 3: the key "developmentAppKey" has no value (found ';' after it)"#
        ),
        (
            "{ enabledFeatures = (); nested = { list = ({ k = ; }); }; }",
            #"c: error: nested.list[0].k: line 1, column 46: the key "k" has no value (found ';' after it)"#
        ),
        (
            "{ enabledFeatures = (); site }",
            #"c: error: site: line 1, column 25: the key "site" has no value (found '}' after it)"#
        ),
    ])
    func theErrorNamesTheKeyAndItsLine(text: String, line: String) throws {
        let error = try #require(readError(Data(text.utf8)))
        #expect(error.diagnostics.map(\.description) == [line])
        #expect(error.kind == .keyWithoutValue)
    }
}

import FeatureGate
import FeatureGateConfig
import Foundation
import Testing

/// Every error a config can have, with the exact diagnostic: source, key path, line, found and expected.
@Suite struct ConfigErrorTests {
    private let anyValue = "an array of feature names, a comma-separated string of names, or an integer bitmask"

    @Test(arguments: [
        ("true", "boolean true"), ("false", "boolean false"), ("1.5", "real 1.5"), ("2e3", "real 2e3"),
        ("-0.0", "real -0.0"), ("null", "null"), ("{}", "an empty dictionary"),
        (#"{"a": 1}"#, "a dictionary of 1 keys"),
    ])
    func enabledFeaturesOfTheWrongTypeIsAnError(value: String, found: String) throws {
        let error = try #require(readError(Data(json(enabled: value).utf8)))
        #expect(error.description == "c: error: enabledFeatures: line 1: expected \(anyValue), found \(found)")
        #expect(error.kind == .wrongType)
        #expect(error.found == found)
        #expect(error.expected == anyValue)
    }

    @Test func anArrayElementThatIsNotAStringIsAnErrorAtItsIndex() {
        let text = """
            {
              "enabledFeatures": [
                "push",
                7,
                ["analytics"],
                true
              ]
            }
            """
        let result = outcome(text)
        #expect(result.features == nil)
        #expect(
            result.lines == [
                "c: error: enabledFeatures[1]: line 4: expected a feature name (a string), found integer 7",
                "c: error: enabledFeatures[2]: line 5: expected a feature name (a string), found an array of 1 value",
                "c: error: enabledFeatures[3]: line 6: expected a feature name (a string), found boolean true",
            ])
    }

    @Test(arguments: [
        ("\"YES\"", #"string "YES""#), ("1", "integer 1"), ("0", "integer 0"), ("null", "null"),
        ("[]", "an empty array"),
    ])
    func resetEnabledFeaturesThatIsNotABooleanIsAnError(value: String, found: String) {
        let result = outcome("{\"enabledFeatures\": [],\n\"resetEnabledFeatures\": \(value)}")
        #expect(
            result.lines == [
                "c: error: resetEnabledFeatures: line 2: expected a boolean (<true/> or <false/> in a plist, true or false in JSON), found \(found)"
            ])
    }

    @Test func aPlistStringForResetIsAnError() {
        let result = outcome(
            plist("<key>enabledFeatures</key><array/>\n<key>resetEnabledFeatures</key>\n<string>YES</string>"))
        #expect(
            result.lines == [
                #"c: error: resetEnabledFeatures: line 6: expected a boolean (<true/> or <false/> in a plist, true or false in JSON), found string "YES""#
            ])
    }

    @Test func aNegativeBitmaskIsAnError() throws {
        let error = try #require(readError(Data(json(enabled: "-1").utf8)))
        #expect(
            error.description == "c: error: enabledFeatures: line 1: expected a non-negative integer bitmask, found -1")
        #expect(error.kind == .negativeBitmask)
        #expect(
            outcome(plist("<key>enabledFeatures</key><integer>-16</integer>")).lines == [
                "c: error: enabledFeatures: line 4: expected a non-negative integer bitmask, found -16"
            ])
        #expect(
            outcome(binaryPlist(["enabledFeatures": -4])).lines == [
                "c: error: enabledFeatures: expected a non-negative integer bitmask, found -4"
            ])
    }

    @Test func aBitmaskBeyond64BitsIsAnError() throws {
        let error = try #require(readError(Data(json(enabled: "18446744073709551616").utf8)))
        #expect(
            error.description
                == "c: error: enabledFeatures: line 1: expected an integer bitmask of at most 64 bits, found 18446744073709551616"
        )
        #expect(error.kind == .bitmaskOutOfRange)
    }

    @Test func aDuplicateKeyIsAnError() {
        let result = outcome("{\"enabledFeatures\": [],\n\"enabledFeatures\": [\"all\"]}")
        #expect(
            result.lines == [
                "c: error: enabledFeatures: line 2: appears 2 times; write it once, so it is clear which value counts"
            ])
        let plistResult = outcome(
            plist(
                "<key>resetEnabledFeatures</key><true/>\n<key>enabledFeatures</key><array/>\n<key>resetEnabledFeatures</key><false/>"
            ))
        #expect(
            plistResult.lines == [
                "c: warning: resetEnabledFeatures: line 4: true: every launch discards the choices the app and the user made and applies enabledFeatures again, keeping only their refusals (consent refusals, and the flags revoke-all turned off)",
                "c: error: resetEnabledFeatures: line 6: appears 2 times; write it once, so it is clear which value counts",
            ])
    }

    @Test func aTopLevelValueThatIsNotADictionaryIsAnError() throws {
        #expect(
            outcome(#"["push"]"#).lines == [
                "c: error: (root): line 1: expected a dictionary at the top level, found an array of 1 value"
            ])
        #expect(
            outcome("<plist><string>push</string></plist>").lines == [
                #"c: error: (root): line 1: expected a dictionary at the top level, found string "push""#
            ])
        #expect(
            outcome(binaryPlist(["push"])).lines == [
                "c: error: (root): expected a dictionary at the top level, found an array of 1 value"
            ])
        let error = try #require(readError(Data("[]".utf8)))
        #expect(error.kind == .notADictionary)
        #expect(error.expected == "a dictionary (a plist <dict> or a JSON object)")
    }

    @Test func tooManyNamesIsAnError() {
        let names = Array(repeating: "\"push\"", count: 257).joined(separator: ",")
        #expect(
            outcome(json(enabled: "[\(names)]")).lines == [
                "c: error: enabledFeatures: line 1: lists 257 names; at most 256 are read"
            ])
        let list = Array(repeating: "push", count: 300).joined(separator: ",")
        #expect(
            outcome(json(enabled: "\"\(list)\"")).lines == [
                "c: error: enabledFeatures: line 1: lists 300 names; at most 256 are read"
            ])
        #expect(
            outcome(json(enabled: "[\(Array(repeating: "\"push\"", count: 256).joined(separator: ","))]")).features
                == .push)
    }

    @Test func everyErrorOfAFileIsReportedInDocumentOrderWithTheWarnings() throws {
        let text = """
            {
              "resetEnabledFeatures": "no",
              "enabledFeatures": ["chat", "pussh", 3, "analytics"]
            }
            """
        let error = try #require(readError(Data(text.utf8)))
        #expect(
            error.diagnostics.map(\.description) == [
                #"c: error: resetEnabledFeatures: line 2: expected a boolean (<true/> or <false/> in a plist, true or false in JSON), found string "no""#,
                #"c: warning: enabledFeatures[0]: line 3: "chat" is a feature Airship retired; ignored"#,
                #"c: error: enabledFeatures[1]: line 3: unknown feature name "pussh"; did you mean "push"?"#,
                "c: error: enabledFeatures[2]: line 3: expected a feature name (a string), found integer 3",
            ])
        #expect(error.errors.count == 3)
        #expect(error.warnings.count == 1)
        #expect(error.keyPath == "resetEnabledFeatures")
        #expect(error.localizedDescription == error.description)
        #expect(!error.localizedDescription.contains("couldn"))
    }

    // MARK: - Files that cannot be parsed

    @Test func anEmptyOrBlankFileIsAnError() throws {
        #expect(
            outcome("").lines == [
                "c: error: (root): the file is empty: expected a dictionary with an enabledFeatures key"
            ])
        #expect(
            outcome(" \n\t\r\n").lines == [
                "c: error: (root): the file holds only whitespace: expected a dictionary with an enabledFeatures key"
            ])
        #expect(
            outcome([0xEF, 0xBB, 0xBF]).lines == [
                "c: error: (root): the file is empty: expected a dictionary with an enabledFeatures key"
            ])
        let error = try #require(readError(Data()))
        #expect(error.kind == .emptyFile)
        #expect(error.format == nil)
    }

    @Test func contentInNoKnownFormatIsAnError() {
        #expect(
            outcome("enabledFeatures: push").lines == [
                #"c: error: (root): expected an XML plist (<?xml or <plist), a binary plist (bplist00), a JSON object ({) or an old-style plist ({ key = value; }), found "enabledFeatures:"…"#
            ])
        #expect(
            outcome([0x00, 0x01, 0xFF]).lines == [
                "c: error: (root): expected an XML plist (<?xml or <plist), a binary plist (bplist00), a JSON object ({) or an old-style plist ({ key = value; }), found bytes 00 01 ff"
            ])
    }

    @Test func textThatIsNotUTF8IsAnErrorWithItsLine() {
        #expect(
            outcome([0xFF, 0xFE, 0x7B, 0x00]).lines == [
                "c: error: (root): line 1, column 1: the file is UTF-16 or UTF-32 text; save it as UTF-8"
            ])
        #expect(
            outcome(Array("{\0\"".utf8)).lines == [
                "c: error: (root): line 1, column 1: the file is UTF-16 or UTF-32 text; save it as UTF-8"
            ])
        let latin1 = Array("{\n\"enabledFeatures\": [\"caf".utf8) + [0xE9] + Array("\"]}".utf8)
        let result = outcome(latin1)
        #expect(result.format == .json)
        #expect(
            result.lines == [
                "c: error: (root): line 2, column 25: byte 0xE9 at offset 26 is not UTF-8; save the file as UTF-8"
            ])
        // Overlong encodings and surrogates are not UTF-8 either.
        #expect(
            outcome(Array("{\"a\":\"".utf8) + [0xC0, 0xAF] + Array("\"}".utf8)).lines.first?.contains("byte 0xC0")
                == true)
        #expect(
            outcome(Array("{\"a\":\"".utf8) + [0xED, 0xA0, 0x80] + Array("\"}".utf8)).lines.first?.contains("byte 0xED")
                == true)
    }

    @Test(arguments: [
        (
            "{\"enabledFeatures\": [\"push\",]}",
            "line 1, column 29: expected a value, found ']' (JSON allows no comma before ']')"
        ),
        (
            "{\"enabledFeatures\": [],}",
            "line 1, column 24: expected a key in double quotes, found '}' (JSON allows no comma before '}')"
        ),
        (
            "{\"enabledFeatures\": [\"push\"",
            "line 1, column 28: expected ',' or ']' after a value in an array, found the end of the file"
        ),
        ("{\"enabledFeatures\": [\"pu", "line 1, column 25: the file ends inside a string"),
        ("{\n  \"enabledFeatures\": [push]\n}", "line 2, column 23: expected a value, found 'p'"),
        ("{\"enabledFeatures\": []} x", "line 1, column 25: found 'x' after the end of the top-level value"),
        ("{\"enabledFeatures\" []}", "line 1, column 20: expected ':' after the key \"enabledFeatures\", found '['"),
        ("{enabledFeatures: []}", "line 1, column 2: expected a key in double quotes, found 'e'"),
        (
            "{\"enabledFeatures\": 01}",
            "line 1, column 22: a number starts with 0 followed by more digits; JSON does not allow leading zeros"
        ),
        ("{\"enabledFeatures\": -}", "line 1, column 22: expected a digit after '-', found '}'"),
        ("{\"enabledFeatures\": 1.}", "line 1, column 23: expected a digit after '.', found '}'"),
        ("{\"enabledFeatures\": 1e}", "line 1, column 23: expected a digit in the exponent, found '}'"),
        ("{\"enabledFeatures\": tru}", "line 1, column 21: expected a value, found 't'"),
        ("{\"enabledFeatures\": \"a\\x\"}", "line 1, column 23: invalid escape \\x in a string"),
        (
            "{\"enabledFeatures\": \"\\u12G4\"}",
            "line 1, column 26: expected four hexadecimal digits after \\u, found 'G'"
        ),
        (
            "{\"enabledFeatures\": \"\\uD800\"}",
            "line 1, column 28: \\uD800 is half of a surrogate pair; the other half is missing"
        ),
        (
            "{\"enabledFeatures\": \"\\uDC00\"}",
            "line 1, column 28: \\uDC00 is half of a surrogate pair; the other half is missing"
        ),
        (
            "{\"enabledFeatures\": \"\\uD800\\u0041\"}",
            "line 1, column 34: \\uD800 must be followed by a low surrogate, found \\u0041"
        ),
        ("{\"enabledFeatures\": \"a\nb\"}", "line 1, column 23: a string runs past the end of the line"),
        ("{\"enabledFeatures\": \"a\u{01}\"}", "line 1, column 23: a string holds the control character U+0001"),
        (
            "{\"enabledFeatures\": [] \0}",
            "line 1, column 24: expected ',' or '}' after a value in an object, found U+0000"
        ),
    ])
    func malformedJSONIsAnErrorWithLineAndColumn(text: String, message: String) throws {
        let error = try #require(readError(Data(text.utf8)))
        #expect(error.description == "c: error: (root): \(message)")
        #expect(error.kind == .syntaxError)
        #expect(error.format == .json)
        #expect(error.line != nil)
    }

    @Test(arguments: [
        (
            "<key>enabledFeatures</key>\n<array><string>push</strin></array>",
            "line 5, column 20: expected </string>, found </strin>"
        ),
        ("<key>enabledFeatures</key>\n<list/>", "line 5, column 1: unknown element <list>"),
        ("<key>enabledFeatures</key>\n<array><key>push</key></array>", "line 5, column 8: <key> outside a <dict>"),
        (
            "<key>enabledFeatures</key>\n<string>push</string>\n<string>x</string>",
            "line 6, column 1: expected <key> or </dict>, found <string>: every value in a <dict> follows a <key>"
        ),
        (
            "<key>enabledFeatures</key>\n<string>a & b</string>",
            "line 5, column 11: '&' does not start an entity such as &amp;"
        ),
        ("<key>enabledFeatures</key>\n<string>&nbsp;</string>", "line 5, column 9: unknown entity &nbsp;"),
        ("<key>enabledFeatures</key>\n<string>&#0;</string>", "line 5, column 9: &#0; is not a character XML allows"),
        (
            "<key>enabledFeatures</key>\n<string>pu\0sh</string>",
            "line 5, column 11: the control character U+0000 is not allowed in XML"
        ),
        ("<key>enabledFeatures</key>\n<string>a<b/></string>", "line 5, column 10: element <b> inside <string>"),
        (
            "<key>enabledFeatures</key>\n<integer>0x10</integer>",
            "line 5, column 1: <integer> holds 4 characters that are not a decimal integer"
        ),
        (
            "<key>enabledFeatures</key>\n<real>fast</real>",
            "line 5, column 1: <real> holds 4 characters that are not a decimal number"
        ),
        ("<key>enabledFeatures</key>\n<true>yes</true>", "line 5, column 1: <true> holds text"),
        ("<key>enabledFeatures</key>\n<data>!!</data>", "line 5, column 1: <data> holds text that is not base64"),
        (
            "<key>enabledFeatures</key>\n<array a=1/>",
            "line 5, column 10: expected a quoted attribute value in <array>, found '1'"
        ),
        (
            "<key>enabledFeatures</key>\n<!-- open comment",
            "line 7, column 9: the file ends inside a comment that starts on line 5"
        ),
    ])
    func malformedXMLIsAnErrorWithItsLine(body: String, message: String) throws {
        let error = try #require(readError(Data(plist(body).utf8)))
        #expect(error.description == "c: error: (root): \(message)")
        #expect(error.format == .xml)
        #expect(error.kind == .syntaxError)
    }

    @Test(arguments: [
        ("<plist version=\"1.0\"/>", "line 1, column 1: <plist/> holds no value"),
        ("<plist>\n</plist>", "line 2, column 1: <plist> holds no value"),
        ("<plist><dict/></plist>\n<dict/>", "line 2, column 1: found '<' after the end of the plist"),
        ("<plist><dict/>", "line 1, column 15: expected </plist>, found the end of the file"),
        (
            "<plist><dict>\n<key>a</key><string>b</string>",
            "line 2, column 31: the file ends inside the <dict> that starts on line 1"
        ),
        (
            "<plist><dict><key>a</key><array>\n<string>b</string>",
            "line 2, column 19: the file ends inside the <array> that starts on line 1"
        ),
        (
            "<plist><dict><key>a</key><string>b",
            "line 1, column 35: the file ends inside the <string> that starts on line 1"
        ),
        ("<!DOCTYPE plist [", "line 1, column 18: the file ends inside the DOCTYPE that starts on line 1"),
        (
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><plist><dict><key>é</key><true/></dict></plist>",
            #"line 1, column 1: the XML declaration says encoding "ISO-8859-1"; only UTF-8 is read"#
        ),
        ("<", "line 1, column 2: expected an element name after '<', found the end of the file"),
    ])
    func malformedXMLDocumentsAreErrors(text: String, message: String) throws {
        let error = try #require(readError(Data(text.utf8)))
        #expect(error.description == "c: error: (root): \(message)")
    }

    @Test func aTruncatedBinaryPlistIsAnError() {
        let full = [UInt8](binaryPlist(["enabledFeatures": ["push"]]))
        #expect(
            outcome(Array(full.prefix(20))).lines == [
                "c: error: (root): the binary plist is truncated: 20 bytes"
            ])
        // Dropping the tail leaves a trailer that points outside the file.
        let result = outcome(Array(full.dropLast(5)))
        #expect(result.features == nil)
        #expect(result.lines.first?.hasPrefix("c: error: (root): the binary plist is corrupt: ") == true)
        #expect(
            outcome(Array("bplist01".utf8) + Array(full.dropFirst(8))).lines == [
                #"c: error: (root): unsupported binary plist version "bplist01""#
            ])
    }

    // MARK: - Files that cannot be read

    @Test func aMissingFileOrADirectoryIsAnUnreadableFileError() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let reader = ConfigReader()
        let missing = directory.url.appending(path: "missing.json")
        do {
            _ = try reader.read(contentsOf: missing)
            Issue.record("read a missing file")
        } catch {
            #expect(
                error.description
                    == "\(missing.path(percentEncoded: false)): error: (root): cannot open the file: No such file or directory"
            )
            #expect(error.kind == .unreadableFile)
            #expect(error.format == nil)
        }
        do {
            _ = try reader.read(contentsOf: directory.url)
            Issue.record("read a directory")
        } catch {
            #expect(error.kind == .unreadableFile)
            #expect(
                error.description.hasSuffix(
                    "error: (root): cannot read the file: found a directory, expected a regular file"))
        }
    }

    @Test func aFileLargerThanTheLimitIsRefusedBeforeParsing() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let url = directory.file("big.json", Data(json(enabled: #"["push"]"#).utf8))
        let reader = ConfigReader(limits: ConfigLimits(maximumFileSize: 10))
        do {
            _ = try reader.read(contentsOf: url)
            Issue.record("read a file over the limit")
        } catch {
            #expect(
                error.description
                    == "\(url.path(percentEncoded: false)): error: (root): the file is larger than 10 bytes, "
                    + "the most a config may be")
            #expect(error.kind == .fileTooLarge)
            #expect(error.found == "more than 10 bytes")
        }
        // A device that never ends is not a file at all: refused before a byte is read.
        do {
            _ = try reader.read(contentsOf: URL(filePath: "/dev/zero"))
            Issue.record("read /dev/zero")
        } catch {
            #expect(
                error.description
                    == "/dev/zero: error: (root): cannot read the file: found a character device, expected a regular file"
            )
            #expect(error.kind == .unreadableFile)
        }
        let result = outcome(json(enabled: "[]"), limits: ConfigLimits(maximumFileSize: 10))
        #expect(result.lines == ["c: error: (root): the file is larger than 10 bytes, the most a config may be"])
    }
}

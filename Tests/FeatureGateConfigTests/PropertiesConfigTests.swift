import FeatureGate
import FeatureGateConfig
import Foundation
import Testing

/// `airshipconfig.properties`: the `java.util.Properties` reading, FeatureGate's strict reading with places, and
/// what Airship Android enables from the same file.
///
/// Airship Android's rules come from `urbanairship/android-library` (the Kotlin sources of the 20.x line, read
/// 2026-11-28): `urbanairship-core/src/main/java/com/urbanairship/AirshipConfigOptions.kt` at 12c87e7 (the
/// `enabledFeatures` parse, `convertFeatureNames`, `build()`'s `dataCollectionOptInEnabled` rule),
/// `util/PropertiesConfigParser.kt` at bc808e6 (trim, empty values dropped, `split("[, ]+")`, `toInt()`,
/// `toBoolean()`) and `PrivacyManager.kt` at 8b97067 (`Feature.fromJson`: `lowercase()`, one unknown name → `null`;
/// `ALL` with `feature_flags`). The `java.util.Properties` rules are OpenJDK's `Properties.load(InputStream)`.
@Suite struct PropertiesConfigTests {
    private func entries(_ text: String) throws -> [PropertiesEntry] {
        try PropertiesParser.parse(Array(text.utf8))
    }

    private func pairs(_ text: String) throws -> [String: String] {
        Dictionary(try entries(text).map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
    }

    private func read(_ text: String, mode: ConfigReadingMode = .strict) throws(ConfigError) -> ConfigReadResult {
        try ConfigReader(mode: mode).read(Data(text.utf8), sourceName: "airshipconfig.properties")
    }

    private func android(_ text: String) -> AirshipAndroidReading {
        AirshipAndroidReading(bytes: Array(text.utf8))
    }

    // MARK: - java.util.Properties

    @Test func hashAndBangLinesAreCommentsOnlyAtTheStartOfALine() throws {
        let parsed = try pairs("# comment = x\n  ! also a comment\nkey = value # not a comment\n")
        #expect(parsed == ["key": "value # not a comment"])
    }

    @Test func equalsColonAndWhitespaceEachSeparateKeyFromValue() throws {
        let parsed = try pairs("a=1\nb:2\nc 3\nd \t = 4\ne:=5\nf\n")
        #expect(parsed == ["a": "1", "b": "2", "c": "3", "d": "4", "e": "=5", "f": ""])
    }

    @Test func continuationLinesJoinWithoutTheirLeadingBlanks() throws {
        let parsed = try entries("enabledFeatures = push, \\\n    analytics,\\\r\n\tcontacts\nnext=1\\\\\n")
        #expect(parsed.map(\.key) == ["enabledFeatures", "next"])
        #expect(parsed[0].value == "push, analytics,contacts")
        // An even number of backslashes is an escaped backslash, not a continuation.
        #expect(parsed[1].value == "1\\")
        // Each character keeps its own line: "analytics" starts on line 2, column 5.
        let analytics = parsed[0].place(ofValueOffset: 6)
        #expect(analytics.line == 2 && analytics.column == 5)
    }

    @Test func escapesResolveAndUnicodeEscapesNeedFourHexDigits() throws {
        let parsed = try pairs(#"k\ ey = \u0070ush\t\:x\qy"#)
        #expect(parsed == ["k ey": "push\t:xqy"])
        #expect(throws: ParseFailure.self) { try entries("enabledFeatures = \\u00zz\n") }
    }

    @Test func bytesAreISO8859OneCharacterEach() throws {
        // "é" in UTF-8 is two bytes: java.util.Properties reads them as "Ã©".
        let parsed = try PropertiesParser.parse([UInt8]("k=".utf8) + [0xC3, 0xA9, 0xFF])
        #expect(parsed.first?.value.unicodeScalars.map(\.value) == [0xC3, 0xA9, 0xFF])
    }

    @Test func aPropertiesFileIsToldByItsNameOrALeadingComment() throws {
        #expect(try read("enabledFeatures = push\n").format == .properties)
        let commented = try ConfigReader().read(Data("# Airship\nenabledFeatures = push\n".utf8))
        #expect(commented.format == .properties)
        #expect(commented.configuration.enabledFeatures == .push)
    }

    // MARK: - FeatureGate's strict reading

    @Test func namesSplitOnCommasAndSpacesMatchIgnoringCase() throws {
        let result = try read("enabledFeatures = PUSH Analytics,,message_center\nresetEnabledFeatures = TRUE\n")
        #expect(result.configuration.enabledFeatures == [.push, .analytics, .messageCenter])
        #expect(result.configuration.resetEnabledFeatures)
        #expect(result.warnings.map(\.kind) == [.resetDiscardsChoices])
    }

    @Test func anIntegerIsABitmask() throws {
        #expect(try read("enabledFeatures = 20\n").configuration.enabledFeatures == [.push, .analytics])
        #expect(throws: ConfigError.self) { try read("enabledFeatures = -1\n") }
    }

    @Test func anUnknownNameIsAnErrorOnItsLineAndColumn() throws {
        let error = #expect(throws: ConfigError.self) {
            try read("# ours\nenabledFeatures = push, in-app-automation\n")
        }
        let diagnostic = try #require(error?.diagnostics.first)
        #expect(diagnostic.kind == .unknownName)
        #expect(diagnostic.keyPath == "enabledFeatures[1]")
        #expect(diagnostic.line == 2)
        #expect(diagnostic.column == 25)
        #expect(diagnostic.suggestion == "in_app_automation")
    }

    @Test func aMissingEnabledFeaturesIsAnError() throws {
        let error = #expect(throws: ConfigError.self) { try read("productionAppKey = abc\n") }
        #expect(error?.diagnostics.map(\.kind) == [.missingKey])
    }

    @Test func aResetThatIsNotABooleanIsAWrongTypeAtItsValue() throws {
        let error = #expect(throws: ConfigError.self) {
            try read("enabledFeatures = push\nresetEnabledFeatures = yes\n")
        }
        let diagnostic = try #require(error?.diagnostics.first)
        #expect(diagnostic.kind == .wrongType)
        #expect(diagnostic.line == 2)
        #expect(diagnostic.column == 24)
    }

    @Test func aMalformedUnicodeEscapeIsASyntaxErrorWithItsPlace() throws {
        let error = #expect(throws: ConfigError.self) { try read("a = 1\nenabledFeatures = \\u12\n") }
        let diagnostic = try #require(error?.diagnostics.first)
        #expect(diagnostic.kind == .syntaxError)
        #expect(diagnostic.line == 2)
        #expect(diagnostic.column == 19)
    }

    // MARK: - Airship Android's reading

    @Test func androidEnablesTheNamedFeaturesAndTheMaskedBitmask() {
        #expect(android("enabledFeatures = Push, analytics\n").enabledFeatures == [.push, .analytics])
        #expect(android("enabledFeatures = 1044\n").enabledFeatures == [.push, .analytics])  // 1024 is no flag
        #expect(android("enabledFeatures = none\n").enabledFeatures == [])
        #expect(android("enabledFeatures = all\n").enabledFeatures == .all)
    }

    @Test func androidKeepsEveryFeatureOnAnUnknownName() {
        let reading = android("enabledFeatures = push, in-app-automation\n")
        #expect(reading.enabledFeatures == .all)
        #expect(reading.notes.map(\.line) == [1])
        // A tab is no separator for Android: one unknown name.
        #expect(android("enabledFeatures = push\tanalytics\n").enabledFeatures == .all)
        // A leading comma leaves an empty first name; "-1" is no bitmask, and no name.
        #expect(android("enabledFeatures = ,push\n").enabledFeatures == .all)
        #expect(android("enabledFeatures = -1\n").enabledFeatures == .all)
        // Too large for a 32-bit Int: read as a name.
        #expect(android("enabledFeatures = 4294967296\n").enabledFeatures == .all)
    }

    @Test func androidKeepsEveryFeatureWhenEnabledFeaturesIsMissingOrEmpty() {
        #expect(android("appKey = x\n").enabledFeatures == .all)
        let empty = android("enabledFeatures =   \n")
        #expect(empty.enabledFeatures == .all)
        #expect(empty.notes.count == 1)
        #expect(android("enabledFeatures = ,\n").enabledFeatures == .all)
    }

    @Test func dataCollectionOptInTurnsOnlyTheDefaultToNone() {
        #expect(android("dataCollectionOptInEnabled = TRUE\n").enabledFeatures == [])
        #expect(android("dataCollectionOptInEnabled = true\nenabledFeatures = in-app\n").enabledFeatures == [])
        #expect(android("dataCollectionOptInEnabled = true\nenabledFeatures = all\n").enabledFeatures == .all)
        #expect(android("dataCollectionOptInEnabled = yes\n").enabledFeatures == .all)
    }

    @Test func androidResetsOnlyOnTrueAndTheLastValueOfAKeyCounts() {
        #expect(android("enabledFeatures = push\nresetEnabledFeatures = True\n").resetEnabledFeatures)
        #expect(!android("enabledFeatures = push\nresetEnabledFeatures = yes\n").resetEnabledFeatures)
        #expect(android("enabledFeatures = push\nenabledFeatures = contacts\n").enabledFeatures == .contacts)
    }

    @Test func androidAppliesNothingOfAFileJavaCannotLoad() {
        let reading = android("enabledFeatures = none\nresetEnabledFeatures = true\nbad = \\u00g0\n")
        #expect(reading.enabledFeatures == .all)
        #expect(!reading.resetEnabledFeatures)
        #expect(reading.notes.first?.line == 3)
    }

    // MARK: - Writing

    @Test func aConfigurationWritesAsPropertiesAndReadsBackTheSameOnBothReadings() throws {
        for features: Feature in [[], [.push, .analytics], .all] {
            let configuration = PrivacyConfiguration(enabledFeatures: features, resetEnabledFeatures: true)
            let data = ConfigWriter.data(for: configuration, as: .properties)
            let again = try ConfigReader().read(data)
            #expect(again.format == .properties)
            #expect(again.configuration == configuration)
            #expect(again.warnings.map(\.kind) == [.resetDiscardsChoices])
            let android = AirshipAndroidReading(bytes: [UInt8](data))
            #expect(android.enabledFeatures == features)
            #expect(android.resetEnabledFeatures)
        }
    }

    @Test func escapesWriteBackToTheSameKeysAndValues() throws {
        let tree = ConfigNode(
            .dictionary([
                ConfigNode.Entry(key: "a key=:", line: nil, value: ConfigNode(.string(" lead, \\ tab\t é 😀 #"))),
                ConfigNode.Entry(key: "#hash", line: nil, value: ConfigNode(.string("!bang\nline"))),
            ]))
        let bytes = try ConfigDocumentWriter.data(for: tree, as: .properties)
        #expect(bytes.allSatisfy { $0 < 0x80 })
        let parsed = try PropertiesParser.parse(bytes)
        #expect(parsed.map(\.key) == ["a key=:", "#hash"])
        #expect(parsed.map(\.value) == [" lead, \\ tab\t é 😀 #", "!bang\nline"])
    }

    @Test func aValueThatIsNotTextCannotBeWrittenAsProperties() {
        let tree = ConfigNode(
            .dictionary([ConfigNode.Entry(key: "inProduction", line: 3, value: ConfigNode(.boolean(true), line: 3))]))
        #expect(throws: ConfigDocumentWriter.Unrepresentable.self) {
            try ConfigDocumentWriter.data(for: tree, as: .properties)
        }
    }
}

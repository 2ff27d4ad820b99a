import FeatureGate
import FeatureGateConfig
import Foundation
import PackageTestSupport
import Testing

/// Hostile input ends in a diagnostic: deep nesting, huge arrays, shared and cyclic binary objects, NUL bytes,
/// bytes that are not UTF-8, random garbage. None of these tests may crash or hang the process.
@Suite struct HardeningTests {
    private let deep = 100_000

    @Test func deeplyNestedJSONIsRefusedAtTheDepthLimit() {
        let arrays = outcome(json(enabled: String(repeating: "[", count: deep)))
        #expect(arrays.lines == ["c: error: (root): line 1, column 84: containers are nested more than 64 levels deep"])
        let objects = outcome(String(repeating: #"{"a":"#, count: deep))
        #expect(
            objects.lines == ["c: error: (root): line 1, column 321: containers are nested more than 64 levels deep"])
        let exactlyAtTheLimit =
            "{\"enabledFeatures\": [], \"x\": \(String(repeating: "[", count: 63))\(String(repeating: "]", count: 63))}"
        #expect(outcome(exactlyAtTheLimit).features == [])
        let custom = outcome(json(enabled: "[[[]]]"), limits: ConfigLimits(maximumDepth: 2))
        #expect(custom.lines == ["c: error: (root): line 1, column 22: containers are nested more than 2 levels deep"])
    }

    @Test func theDepthLimitCannotBeRaisedPastTheStackSafeMaximum() {
        let result = outcome(
            json(enabled: String(repeating: "[", count: deep)), limits: ConfigLimits(maximumDepth: .max))
        #expect(
            result.lines == ["c: error: (root): line 1, column 276: containers are nested more than 256 levels deep"])
    }

    @Test func deeplyNestedXMLIsRefusedAtTheDepthLimit() {
        let text = plist("<key>enabledFeatures</key>\n" + String(repeating: "<array>", count: deep))
        #expect(
            outcome(text).lines == [
                "c: error: (root): line 5, column 442: containers are nested more than 64 levels deep"
            ])
    }

    @Test func deeplyNestedBinaryPlistsAreRefusedAtTheDepthLimit() {
        // Object i is an array holding object i + 1; the last is an empty array.
        let count = 20_000
        var objects: [[UInt8]] = (0..<count - 1).map { index in
            let next = index + 1
            return [0xA1, UInt8(next >> 8), UInt8(next & 0xFF)]
        }
        objects.append([0xA0])
        #expect(
            outcome(handMadeBinaryPlist(objects, referenceSize: 2)).lines == [
                "c: error: (root): containers are nested more than 64 levels deep"
            ])
    }

    @Test func deeplyNestedDictionariesPassedInAreRefused() {
        var value: Any = ["push"]
        for _ in 0..<1_000 { value = [value] }
        do {
            _ = try ConfigReader().read(dictionary: ["enabledFeatures": value])
            Issue.record("read a dictionary nested 1000 levels deep")
        } catch {
            #expect(error.description == "<dictionary>: error: (root): containers are nested more than 64 levels deep")
        }
    }

    @Test func hugeArraysAreRefusedAtTheValueLimit() {
        let many = "[" + Array(repeating: "0", count: 150_000).joined(separator: ",") + "]"
        #expect(
            outcome(#"{"enabledFeatures": [], "big": \#(many)}"#).lines == [
                "c: error: (root): line 1, column 200027: the document holds more than 100000 values"
            ])
        let xml = plist("<key>big</key><array>" + String(repeating: "<true/>", count: 110_000) + "</array>")
        #expect(
            outcome(xml).lines == [
                "c: error: (root): line 4, column 700008: the document holds more than 100000 values"
            ])
    }

    @Test func aBinaryPlistThatSharesObjectsCannotExpandPastTheValueLimit() {
        // Thirty arrays, each holding the next one twice: 2^30 values if followed naively.
        var objects: [[UInt8]] = [[0xD1, 1, 2], [0x5F, 0x10, 15] + Array("enabledFeatures".utf8)]
        for level in 0..<30 {
            let next = UInt8(3 + level)
            objects.append(level == 29 ? [0xA0] : [0xA2, next, next])
        }
        let result = outcome(handMadeBinaryPlist(objects, referenceSize: 1))
        #expect(result.lines == ["c: error: (root): the document holds more than 100000 values"])
    }

    @Test func aBinaryPlistThatContainsItselfIsRefused() {
        // The top dictionary's value is an array holding that array.
        let objects: [[UInt8]] = [[0xD1, 1, 2], [0x5F, 0x10, 15] + Array("enabledFeatures".utf8), [0xA1, 2]]
        #expect(
            outcome(handMadeBinaryPlist(objects, referenceSize: 1)).lines == [
                "c: error: (root): the binary plist is corrupt: object 2 contains itself"
            ])
    }

    @Test func binaryPlistOffsetsAndReferencesOutsideTheFileAreRefused() {
        let objects: [[UInt8]] = [[0xD1, 1, 9], [0x5F, 0x10, 15] + Array("enabledFeatures".utf8)]
        #expect(
            outcome(handMadeBinaryPlist(objects, referenceSize: 1)).lines == [
                "c: error: (root): the binary plist is corrupt: object 0 refers to object 9 of 2"
            ])
        var bytes = handMadeBinaryPlist([[0xA5, 0, 0]], referenceSize: 1)
        #expect(
            outcome(bytes).lines == [
                "c: error: (root): the binary plist is corrupt: object 0 runs past the end of the object area"
            ])
        // An offset table entry pointing into the trailer.
        bytes = handMadeBinaryPlist([[0xA0]], referenceSize: 1)
        bytes[bytes.count - 33] = 0xF0
        #expect(
            outcome(bytes).lines == [
                "c: error: (root): the binary plist is corrupt: object 0 starts at byte 240, outside the object area"
            ])
        // A trailer that claims more objects than the file could hold.
        bytes = handMadeBinaryPlist([[0xA0]], referenceSize: 1)
        bytes[bytes.count - 20] = 0x7F
        #expect(outcome(bytes).lines.first?.contains("the trailer claims") == true)
    }

    @Test func nulBytesEndInADiagnostic() {
        #expect(
            outcome(Array(json(enabled: "[\"push\0\"]").utf8)).lines == [
                "c: error: (root): line 1, column 27: a string holds the control character U+0000"
            ])
        #expect(
            outcome(Array(#"{"enabledFeatures": ["push\u0000"]}"#.utf8)).lines == [
                #"c: error: enabledFeatures[0]: line 1: unknown feature name "push\u{0}"; did you mean "push"?"#
            ])
        #expect(
            outcome([0x7B, 0x00]).lines == [
                "c: error: (root): line 1, column 1: the file is UTF-16 or UTF-32 text; save it as UTF-8"
            ])
        #expect(outcome(Array(repeating: 0, count: 1_000)).lines.count == 1)
    }

    @Test func randomBytesNeverCrashAndNeverEnableAFlagOutsideTheCatalog() {
        var generator = SeededGenerator(seed: 0xFEA7)
        let prefixes: [[UInt8]] = [[], Array("{".utf8), Array("<plist><dict>".utf8), Array("bplist00".utf8)]
        for round in 0..<3_000 {
            let length = Int.random(in: 0..<200, using: &generator)
            let body = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let input = prefixes[round % prefixes.count] + body
            for mode in ConfigReadingMode.allCases {
                let result = outcome(input, mode)
                if let features = result.features {
                    #expect(Feature.all.isSuperset(of: features))
                } else {
                    #expect(result.lines.contains { $0.contains(": error: ") })
                }
            }
        }
    }

    /// A bplist00 file around `objects` (object 0 is the top), assembled as the writer does.
    private func handMadeBinaryPlist(_ objects: [[UInt8]], referenceSize: Int) -> [UInt8] {
        ConfigWriter.assembleBinaryPlist(objects, referenceSize: referenceSize)
    }
}

import FeatureGateConfig
import Foundation
import PackageTestSupport
import Testing

/// The allocation-free ASCII paths of `NameMatching` give the answers of the general paths they shortcut.
@Suite struct NameMatchingTests {
    private static let targets = ["enabledFeatures", "resetEnabledFeatures", "push", "in_app_automation"]

    @Test func asciiNearMissAgreesWithTheScalarPathOnThousandsOfKeys() {
        var generator = SeededGenerator(seed: 20_260_611)
        var nearMisses = 0
        for _ in 0..<10_000 {
            let target = Self.targets.randomElement(using: &generator)!
            let key = Self.mutated(target, using: &generator)
            let reference =
                key != target && key.unicodeScalars.count <= 64 && NameMatching.scalarNearMiss(key, of: target)
            #expect(NameMatching.isNearMiss(key, of: target) == reference, "key \(key.debugDescription), \(target)")
            if reference { nearMisses += 1 }
        }
        // The keys must exercise both answers, or the comparison proves little.
        #expect(nearMisses > 1_000)
        #expect(nearMisses < 9_000)
    }

    @Test func asciiNearMissLeavesNonASCIITextToTheScalarPath() {
        #expect(NearMissTarget("enabledFeatures").asciiNearMiss("enabledFeaturé") == nil)
        #expect(NearMissTarget("enabledFeaturé").asciiNearMiss("enabledFeatures") == nil)
        // U+212A KELVIN SIGN is not a K: two edits away after folding, as the scalar path says.
        #expect(NameMatching.isNearMiss("\u{212A}enabledFeatures", of: "enabledFeatures"))
        #expect(NameMatching.isNearMiss("enabledFeatures\u{212A}\u{212A}\u{212A}", of: "enabledFeatures") == false)
    }

    @Test func aKeyOfMoreThan64CharactersIsNeverANearMiss() {
        let padded = "enabledFeatures" + String(repeating: " ", count: 49)
        #expect(NameMatching.isNearMiss(padded, of: "enabledFeatures"))
        #expect(NameMatching.isNearMiss(padded + " ", of: "enabledFeatures") == false)
    }

    @Test func normalizeTrimsAndLowercasesASCIIExactlyAsFoundationWould() {
        var generator = SeededGenerator(seed: 7)
        let alphabet = Array("aZ_- \t\n\r\u{0B}\u{0C}pushALL9".unicodeScalars)
        for _ in 0..<5_000 {
            let length = Int.random(in: 0...12, using: &generator)
            var scalars = String.UnicodeScalarView()
            for _ in 0..<length { scalars.append(alphabet.randomElement(using: &generator)!) }
            let raw = String(scalars)
            // For ASCII, `.whitespacesAndNewlines` is exactly the six characters the reader trims.
            let expected = raw.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            #expect(NameMatching.normalize(raw) == expected, "raw \(raw.debugDescription)")
        }
    }

    /// `target` with a few random edits: case flips, separators, surrounding whitespace, deletions, substitutions
    /// and insertions, and now and then a long run of padding.
    private static func mutated(_ target: String, using generator: inout SeededGenerator) -> String {
        var bytes = Array(target.utf8)
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_- \t".utf8)
        for _ in 0..<Int.random(in: 0...4, using: &generator) {
            let position = Int.random(in: 0...bytes.count, using: &generator)
            switch Int.random(in: 0..<5, using: &generator) {
            case 0 where position < bytes.count:
                let byte = bytes[position]
                bytes[position] = (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) ? byte ^ 0x20 : byte
            case 1 where position < bytes.count:
                bytes.remove(at: position)
            case 2 where position < bytes.count:
                bytes[position] = letters.randomElement(using: &generator)!
            case 3:
                bytes.insert(contentsOf: Array(" _\t".utf8).shuffled(using: &generator).prefix(1), at: position)
            default:
                bytes.insert(letters.randomElement(using: &generator)!, at: position)
            }
        }
        if Int.random(in: 0..<20, using: &generator) == 0 {
            bytes += Array(repeating: UInt8(ascii: " "), count: Int.random(in: 40...60, using: &generator))
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

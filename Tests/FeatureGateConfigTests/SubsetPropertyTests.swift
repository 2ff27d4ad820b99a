import FeatureGate
import FeatureGateConfig
import Foundation
import PackageTestSupport
import Testing

/// The promise, checked on thousands of seeded random configs in every format and mode: the parsed set is a
/// subset of what the input names. It is never wider.
@Suite struct SubsetPropertyTests {
    /// What a generated `enabledFeatures` names, worked out here without the reader.
    private struct Naming {
        var named: Feature = []
        var mustFail = false
        var hasUnknownName = false
    }

    @Test func theParsedSetIsNeverWiderThanWhatTheInputNames() throws {
        var generator = SeededGenerator(seed: 20_261_122)
        var counts = [String: Int]()
        for _ in 0..<4_000 {
            let catalog = generator.chance(50) ? FeatureCatalog.builtIn : customCatalog
            let mode = generator.pick(ConfigReadingMode.allCases)
            var entries: [(String, GeneratedValue)] = []
            var naming = Naming()

            for key in ["productionAppKey", "site", "nested"] where generator.chance(30) {
                entries.append((key, generator.value(depth: 2)))
            }
            switch Int.random(in: 0..<10, using: &generator) {
            case 0:  // missing, or misspelled
                if generator.chance(50) {
                    entries.append(("EnabledFeatures", .array([.string("push")])))
                    naming.mustFail = true
                } else if mode == .airshipCompatible {
                    naming.named = catalog.allFeatures
                } else {
                    naming.mustFail = true
                }
            default:
                entries.append(("enabledFeatures", enabledValue(&generator, catalog: catalog, naming: &naming)))
            }
            if generator.chance(40) {
                let reset: GeneratedValue = generator.chance(90) ? .boolean(generator.chance(50)) : .string("YES")
                if case .string = reset { naming.mustFail = true }
                entries.append(("resetEnabledFeatures", reset))
            }
            if naming.hasUnknownName && mode == .strict { naming.mustFail = true }
            generator.shuffleEntries(&entries)

            let document = GeneratedValue.dictionary(entries)
            // An old-style plist has no numbers or booleans to generate them as; OpenStepPlistTests covers it.
            let format = generator.pick([ConfigFormat.json, .xml, .binary])
            let data: Data
            switch format {
            case .json: data = Data(document.json(using: &generator).utf8)
            case .xml: data = Data(document.xmlDocument.utf8)
            default: data = binaryPlist(document.object)
            }
            let result = outcome(data, mode, catalog: catalog)
            counts[result.isValid ? "valid" : "invalid", default: 0] += 1

            if let features = result.features {
                #expect(naming.named.isSuperset(of: features), "wider than named: \(features) \(result.lines)")
                #expect(!naming.mustFail, "should have failed: \(result.lines)")
                #expect(features == catalog.mask(naming.named), "\(result.lines)")
            } else {
                #expect(naming.mustFail, "should have been read: \(result.lines)")
            }
        }
        // Both outcomes are well represented, so the property is not vacuous.
        #expect(counts["valid", default: 0] > 1_000)
        #expect(counts["invalid", default: 0] > 1_000)
    }

    @Test func mutatedFilesNeverEnableAFlagTheirTextDoesNotName() {
        var generator = SeededGenerator(seed: 0x5EED)
        let seeds = [
            json(enabled: #"["push", "analytics"]"#), json(enabled: #""contacts,push""#),
            plist("<key>enabledFeatures</key><array><string>push</string><string>feature_flags</string></array>"),
            plist("<key>enabledFeatures</key><string>tags_and_attributes, message_center</string>"),
        ]
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz_,\"[]{}<>/ \n".utf8)
        for round in 0..<3_000 {
            var bytes = Array(seeds[round % seeds.count].utf8)
            for _ in 0..<Int.random(in: 1...4, using: &generator) where !bytes.isEmpty {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[position] = generator.pick(alphabet)
                case 1: bytes.insert(generator.pick(alphabet), at: position)
                default: bytes.remove(at: position)
                }
            }
            let text = String(decoding: bytes, as: UTF8.self).lowercased()
            for mode in ConfigReadingMode.allCases {
                guard let features = outcome(bytes, mode).features else { continue }
                #expect(Feature.all.isSuperset(of: features))
                // Without "all", escapes or digits, every enabled flag must be spelled out in the text.
                if mode != .airshipCompatible, !text.contains("all"),
                    !text.contains(where: { "\\&0123456789".contains($0) })
                {
                    for name in FeatureCatalog.builtIn.names(of: features) {
                        #expect(text.contains(name), "\(name) enabled by \(text)")
                    }
                }
            }
        }
    }

    /// A random `enabledFeatures` value, and what it names.
    private func enabledValue(
        _ generator: inout SeededGenerator, catalog: FeatureCatalog, naming: inout Naming
    ) -> GeneratedValue {
        switch Int.random(in: 0..<10, using: &generator) {
        case 0..<5:
            var elements: [GeneratedValue] = []
            for _ in 0..<Int.random(in: 0...8, using: &generator) {
                if generator.chance(4) {
                    elements.append(.integer(3))
                    naming.mustFail = true
                } else {
                    let token = name(&generator, catalog: catalog)
                    record(token, catalog: catalog, naming: &naming)
                    elements.append(.string(token))
                }
            }
            return .array(elements)
        case 5..<8:
            let tokens = (0..<Int.random(in: 1...5, using: &generator)).map { _ in name(&generator, catalog: catalog) }
            let list = tokens.joined(separator: generator.pick([",", ", ", " ,"]))
            // Split the way the documented form reads it: on every comma.
            for item in list.split(separator: ",", omittingEmptySubsequences: false) {
                record(String(item), catalog: catalog, naming: &naming)
            }
            return .string(list)
        case 8:
            if generator.chance(10) {
                naming.mustFail = true
                return .integer(-Int64.random(in: 1...1_000, using: &generator))
            }
            let bits = UInt64.random(in: 0 ... .max, using: &generator) & generator.pick([0x1FF, 0x3_01FF, .max])
            naming.named = Feature(rawValue: UInt(truncatingIfNeeded: bits))
            return bits > UInt64(Int64.max) ? .unsignedInteger(bits) : .integer(Int64(bits))
        default:
            naming.mustFail = true
            return generator.pick([.boolean(true), .real(1.5), .dictionary([]), .data([1])])
        }
    }

    /// A feature name as people write them: right, oddly cased or padded, retired, misspelled, or junk.
    private func name(_ generator: inout SeededGenerator, catalog: FeatureCatalog) -> String {
        let real = generator.pick(catalog.entries.map(\.name) + ["all", "none", "chat", "location"])
        switch Int.random(in: 0..<10, using: &generator) {
        case 0..<4: return real
        case 4..<6:
            let cased = String(real.map { generator.chance(50) ? Character($0.uppercased()) : $0 })
            return generator.pick(["", " ", "\t"]) + cased + generator.pick(["", " ", "\n"])
        case 6..<8:
            var scalars = Array(real.unicodeScalars)
            scalars[Int.random(in: 0..<scalars.count, using: &generator)] = generator.pick(["x", "_", "0", "é"])
            return String(String.UnicodeScalarView(scalars))
        case 8: return ""
        default: return generator.junk()
        }
    }

    /// Adds what one written name means to `naming`, by the documented rules.
    private func record(_ token: String, catalog: FeatureCatalog, naming: inout Naming) {
        let spaces: Set<Unicode.Scalar> = [" ", "\t", "\n", "\r", "\u{0B}", "\u{0C}"]
        var scalars = Array(token.unicodeScalars)
        while let first = scalars.first, spaces.contains(first) { scalars.removeFirst() }
        while let last = scalars.last, spaces.contains(last) { scalars.removeLast() }
        let folded = String(
            String.UnicodeScalarView(scalars.map { ("A"..."Z").contains($0) ? Unicode.Scalar($0.value + 32)! : $0 }))
        if folded == "all" {
            naming.named.formUnion(catalog.allFeatures)
        } else if let flag = catalog.feature(named: folded) {
            naming.named.formUnion(flag)
        } else if !["", "none", "chat", "location"].contains(folded) {
            naming.hasUnknownName = true
        }
    }
}

extension SeededGenerator {
    /// Shuffles dictionary entries, so the keys the reader wants are not always in one place.
    mutating func shuffleEntries(_ entries: inout [(String, GeneratedValue)]) {
        entries.shuffle(using: &self)
    }
}

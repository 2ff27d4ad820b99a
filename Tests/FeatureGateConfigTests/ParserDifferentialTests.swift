import FeatureGate
import FeatureGateConfig
import Foundation
import PackageTestSupport
import Testing

/// The reader's own parsers agree with Foundation's on thousands of random documents that Foundation wrote (or
/// that this test wrote and Foundation reads), so "own parser" never means "different meaning".
@Suite struct ParserDifferentialTests {
    @Test func binaryPlistsWrittenByFoundationParseToTheSameTree() throws {
        var generator = SeededGenerator(seed: 0xB1_0000)
        for _ in 0..<1_500 {
            let document = generator.value(depth: 4)
            let data = try PropertyListSerialization.data(
                fromPropertyList: document.object, format: .binary, options: 0)
            try expectSameTree(data, document.object)
        }
    }

    @Test func xmlPlistsWrittenByFoundationParseToTheSameTree() throws {
        var generator = SeededGenerator(seed: 0xA1_0000)
        for _ in 0..<1_500 {
            let document = generator.value(depth: 4)
            let data = try PropertyListSerialization.data(fromPropertyList: document.object, format: .xml, options: 0)
            try expectSameTree(data, document.object)
        }
    }

    @Test func xmlPlistsWrittenHereParseToWhatFoundationReads() throws {
        var generator = SeededGenerator(seed: 0xA2_0000)
        for _ in 0..<1_500 {
            let data = Data(generator.value(depth: 4).xmlDocument.utf8)
            let foundation = try PropertyListSerialization.propertyList(from: data, format: nil)
            try expectSameTree(data, foundation)
        }
    }

    @Test func jsonWrittenHereParsesToWhatJSONSerializationReads() throws {
        var generator = SeededGenerator(seed: 0x7A_0000)
        for _ in 0..<1_500 {
            // A config is an object or an array at the top, never a bare string or number.
            let text = GeneratedValue.array([jsonSafe(generator.value(depth: 4))]).json(using: &generator)
            let data = Data(text.utf8)
            let foundation = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            try expectSameTree(data, foundation)
        }
    }

    @Test func theExampleConfigsParseAsFoundationReadsThem() throws {
        let directory = packageRoot.appending(path: "Examples/Configs")
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path(percentEncoded: false))
        where name.hasSuffix(".plist") && !name.hasPrefix("invalid-") {
            let data = try Data(contentsOf: directory.appending(path: name))
            try expectSameTree(data, try PropertyListSerialization.propertyList(from: data, format: nil))
        }
    }

    /// JSONSerialization has no dates or data, and on Linux reads large integers and long decimals only
    /// approximately (the reader keeps them exact): keep numbers where both must agree exactly.
    private func jsonSafe(_ value: GeneratedValue) -> GeneratedValue {
        switch value {
        case .date, .data: .string("x")
        case .unsignedInteger(let number): .integer(Int64(number % 1_000_000_000))
        case .integer(let number): .integer(number % 1_000_000_000)
        case .real(let number): .real((number / 1_000).rounded() / 8)
        case .array(let elements): .array(elements.map(jsonSafe))
        case .dictionary(let entries): .dictionary(entries.map { ($0.0, jsonSafe($0.1)) })
        default: value
        }
    }

    private func expectSameTree(_ data: Data, _ object: Any, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (_, mine) = try ConfigReader().parse(bytes: [UInt8](data), source: "d")
        let theirs = try FoundationValueBridge.node(from: object, limits: .default)
        #expect(
            canonical(mine) == canonical(theirs), "\(String(decoding: data.prefix(400), as: UTF8.self))",
            sourceLocation: sourceLocation)
    }
}

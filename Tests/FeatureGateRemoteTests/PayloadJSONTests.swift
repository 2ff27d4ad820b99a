import FeatureGateRemote
import Foundation
import PackageTestSupport
import RemoteFuzzing
import Testing

/// The payload parser's JSON reading: strict RFC 8259, UTF-8 only, bounded depth, duplicate keys refused.
@Suite struct PayloadJSONTests {
    static let target = RemoteConfigTarget(platform: .ios, sdkVersion: "17.2.0", appVersion: "1.0.3")

    /// Whether `text` is read as JSON (the payload may still be refused for what it says).
    func isReadAsJSON(_ bytes: [UInt8]) -> Bool {
        do {
            _ = try RemoteConfigParser.parse(Data(bytes), for: Self.target)
            return true
        } catch {
            return !error.found.hasPrefix("malformed JSON")
        }
    }

    @Test(arguments: [
        #"{"disabled_features":["push"]}"#, " \n{ } \t",
        #"{"a":[1,-0,0.5,1e3,-2E-2,1e300,true,false,null,"\u00e9\ud83d\ude00\n\/"]}"#,
        "\u{FEFF}{}", #"{"é":"ü"}"#, "[]", "3", #""x""#,
    ])
    func validJSONIsRead(_ text: String) throws {
        #expect(isReadAsJSON(Array(text.utf8)))
        #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)) != nil)
    }

    @Test(arguments: [
        "", "{", "}", #"{"a":1,}"#, "[1,]", "[01]", "[1.]", "[.5]", "[+1]", "[1e]", "[-]", "[NaN]", "[Infinity]",
        "[tru]", "[nul]", #"["a\x"]"#, #"["\u12"]"#, #"["\ud800"]"#, #"["\udc00"]"#, "[\"a\tb\"]", #"{a:1}"#,
        #"{"a" 1}"#, "{} {}", "[1 2]", "'a'", "[1e400]", "[-1e400]", #"{"a":1}x"#,
    ])
    func malformedJSONIsRefused(_ text: String) {
        #expect(!isReadAsJSON(Array(text.utf8)))
    }

    @Test func aKeyGivenTwiceRefusesThePayload() {
        #expect(!isReadAsJSON(Array(#"{"disabled_features":["push"],"disabled_features":[]}"#.utf8)))
        #expect(!isReadAsJSON(Array(#"{"a":{"x":1,"x":1}}"#.utf8)))
        #expect(isReadAsJSON(Array(#"{"a":{"x":1},"b":{"x":1}}"#.utf8)))
    }

    @Test func nestingIsBounded() {
        #expect(isReadAsJSON(Array((String(repeating: "[", count: 64) + String(repeating: "]", count: 64)).utf8)))
        #expect(!isReadAsJSON(Array((String(repeating: "[", count: 65) + String(repeating: "]", count: 65)).utf8)))
        #expect(!isReadAsJSON(Array(String(repeating: "[", count: 100_000).utf8)))
    }

    @Test func invalidUTF8IsRefused() {
        #expect(!isReadAsJSON([0x22, 0xC3, 0x28, 0x22]))
        #expect(!isReadAsJSON([0x22, 0xED, 0xA0, 0x80, 0x22]))
    }

    /// Every generated payload is JSON Foundation reads; the parser must read it too.
    @Test func generatedPayloadsAreReadLikeFoundationReadsThem() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        for _ in 0..<300 {
            let recipe = (0..<100).map { _ in UInt8.random(in: 0...255, using: &random) }
            let document = RemotePayloadGenerator.document(from: recipe)
            let foundation =
                (try? JSONSerialization.jsonObject(with: Data(document), options: .fragmentsAllowed)) != nil
            #expect(isReadAsJSON(document) == foundation, "seed \(seed): \(String(decoding: document, as: UTF8.self))")
        }
    }
}

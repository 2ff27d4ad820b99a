import FeatureGate
import Foundation
import Testing

/// The package's own JSON reader (issue 47: the gate state and the ledger's checkpoint are read with it instead of
/// `JSONDecoder`) reads every document as `JSONDecoder` does: the same value where the decoder decodes one, nothing
/// where the decoder throws. Each document is checked against the decoder itself, on this platform's Foundation.
@Suite struct JSONValueTests {
    struct IntField: Decodable { var a: Int }
    struct UIntField: Decodable { var a: UInt }
    struct DoubleField: Decodable { var a: Double }
    struct BoolField: Decodable { var a: Bool }
    struct StringField: Decodable { var a: String }
    struct OptionalIntField: Decodable { var a: Int? }
    struct StringsField: Decodable { var a: [String] }

    static let documents = [
        #"{"a":1}"#, #"{"a":1,"a":2}"#, #"{"a":1.0}"#, #"{"a":1e2}"#, #"{"a":1E+2}"#, #"{"a":1.5}"#, #"{"a":-0}"#,
        #"{"a":-1}"#, #"{"a":99999999999999999999}"#, #"{"a":18446744073709551615}"#, #"{"a":9223372036854775807}"#,
        #"{"a":-9223372036854775808}"#, #"{"a":1e400}"#, #"{"a":01}"#, #"{"a":.5}"#, #"{"a":-}"#, #"{"a":1.}"#,
        #"{"a":true}"#, #"{"a":false}"#, #"{"a":tru}"#, #"{"a":null}"#, #"{"a":"1"}"#, #"{"a":"x\u00e9\n"}"#,
        #"{"a":"\ud83d\ude00"}"#, #"{"a":"unterminated}"#, #"{"a":["x","y"]}"#, #"{"a":["x",1]}"#, #"{"a":[]}"#,
        #"{"a":1} x"#, "  {\"a\":1}  \n", #"{"a":1,}"#, "\u{FEFF}{\"a\":1}", #"{"\u0061":1}"#, #"{}"#, #"[]"#,
        #"{"a":1"#, #"{"a" 1}"#, #"{a:1}"#, #"{"a":1,,"b":2}"#, #"{"b":{"c":[1,{"d":null}]},"a":2}"#, "", "1",
        #"{"a":[1,]}"#, #"{"a":"tab\there"}"#,
    ]

    /// What the decoder reads from `document` as `T`'s field `a`, or `nil` when it throws.
    static func decoded<T: Decodable, Value>(_: T.Type, _ document: String, _ field: (T) -> Value) -> Value? {
        (try? JSONDecoder().decode(T.self, from: Data(document.utf8))).map(field)
    }

    @Test(arguments: documents)
    func readsEveryDocumentAsJSONDecoderDoes(document: String) {
        let json = JSONValue(parsing: Data(document.utf8))
        // A required field: the value, or nothing when absent, null or of another type.
        #expect(json?["a"]?.integer(Int.self) == Self.decoded(IntField.self, document, \.a), "\(document)")
        #expect(json?["a"]?.integer(UInt.self) == Self.decoded(UIntField.self, document, \.a), "\(document)")
        #expect(json?["a"]?.double == Self.decoded(DoubleField.self, document, \.a), "\(document)")
        #expect(json?["a"]?.bool == Self.decoded(BoolField.self, document, \.a), "\(document)")
        #expect(json?["a"]?.string == Self.decoded(StringField.self, document, \.a), "\(document)")
        let strings = json?["a"]?.array.flatMap { elements in
            let names = elements.compactMap(\.string)
            return names.count == elements.count ? names : nil
        }
        #expect(strings == Self.decoded(StringsField.self, document, \.a), "\(document)")
        // An optional field: absent or null reads as nil; of another type, as nothing at all.
        let optional = json.flatMap { $0.optional("a") { $0.integer(Int.self) } }
        let expected = Self.decoded(OptionalIntField.self, document, \.a)
        #expect(optional == expected, "\(document)")
    }

    @Test func aDocumentNestedDeeperThanTheDecoderAllowsIsRefused() {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(JSONValue(parsing: Data(deep.utf8)) == nil)
        let shallow = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(JSONValue(parsing: Data(shallow.utf8)) != nil)
    }
}

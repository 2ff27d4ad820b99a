import FeatureGateIAB
import Foundation
import Testing

/// The one conversion of Foundation values into CMP values, shared by the device reader, the CLI and the demo.
@Suite struct CMPValueConversionTests {
    private static func converted(_ value: Any) -> Result<CMPValue, CMPValue.TypeError> {
        Result { () throws(CMPValue.TypeError) in try CMPValue(foundationValue: value) }
    }

    @Test func stringsAndWholeNumbersConvert() {
        #expect(Self.converted("1YNN") == .success(.string("1YNN")))
        #expect(Self.converted(1) == .success(.number(1)))
        #expect(Self.converted(NSNumber(value: 0)) == .success(.number(0)))
        #expect(Self.converted(NSNumber(value: Int64(1) << 40)) == .success(.number(1 << 40)))
        #expect(Self.converted(NSNumber(value: 2.0)) == .success(.number(2)))
        #expect(Self.converted(Double(1)) == .success(.number(1)))
        #expect(Self.converted(NSNumber(value: UInt64(7))) == .success(.number(7)))
    }

    @Test func aBooleanIsReportedNotReadAsANumber() {
        let expected = Result<CMPValue, CMPValue.TypeError>.failure(CMPValue.TypeError(found: "a Boolean"))
        #expect(Self.converted(true) == expected)
        #expect(Self.converted(false) == expected)
        #expect(Self.converted(NSNumber(value: true)) == expected)
        let json = try? JSONSerialization.jsonObject(with: Data(#"{"a": true, "b": 1}"#.utf8)) as? [String: Any]
        #expect(json.map { Self.converted($0["a"]!) } == expected)
        #expect(json.map { Self.converted($0["b"]!) } == .success(.number(1)))
    }

    @Test func aFractionIsNeverTruncated() {
        #expect(Self.converted(0.5) == .failure(CMPValue.TypeError(found: "0.5")))
        #expect(Self.converted(NSNumber(value: 1.5)) == .failure(CMPValue.TypeError(found: "1.5")))
        #expect(Self.converted(Double.nan).failure != nil)
    }

    @Test func anyOtherValueSaysItsType() throws {
        let error = try #require(Self.converted(Date()).failure)
        #expect(error.found == "a value of type \(type(of: Date() as Any))")
        #expect(error.description.hasSuffix(", expected a whole number or a string"))
        #expect(Self.converted(Data([1])).failure != nil)
        #expect(Self.converted(["1"]).failure != nil)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

import FeatureGate
import FeatureGateConfig
import Foundation
import PackageTestSupport
import Testing

/// Numbers the file chooses (NaN, infinite, denormal and huge reals and dates, integers past 64 bits) end in a
/// diagnostic that quotes them; none is formatted or converted through an API that can trap.
@Suite struct UntrustedNumberTests {
    /// Bit patterns of 8-byte doubles a binary plist may hold as a date or a real.
    static let hostileDoubles: [(bits: UInt64, text: String)] = [
        (0x7FF8_0000_0000_0000, "nan"),
        (0xFFF8_0000_0000_0000, "-nan"),
        (0x7FF0_0000_0000_0001, "snan(0x1)"),
        (0x7FF4_0000_0000_0000, "snan"),
        (0x7FF0_0000_0000_0000, "inf"),
        (0xFFF0_0000_0000_0000, "-inf"),
        (0x7FEF_FFFF_FFFF_FFFF, "1.7976931348623157e+308"),
        (0xFFEF_FFFF_FFFF_FFFF, "-1.7976931348623157e+308"),
        (0x4350_0000_0000_0000, "1.8014398509481984e+16"),
    ]

    @Test(arguments: hostileDoubles)
    func aBinaryPlistDateOfAnyBitPatternIsQuotedInTheDiagnostic(bits: UInt64, text: String) {
        let result = outcome(binaryPlist(enabledFeatures: [0x33] + bigEndian(bits)))
        #expect(
            result.lines == [
                "c: error: enabledFeatures: expected an array of feature names, a comma-separated string of names, "
                    + "or an integer bitmask, found date \(text) seconds after 2001-01-01T00:00:00Z"
            ])
    }

    @Test func denormalAndNegativeZeroDatesReadAsTheReferenceDate() {
        for bits: UInt64 in [0x0000_0000_0000_0001, 0x8000_0000_0000_0000, 0x000F_FFFF_FFFF_FFFF] {
            let result = outcome(binaryPlist(enabledFeatures: [0x33] + bigEndian(bits)))
            #expect(result.lines.first?.hasSuffix("found date 2001-01-01T00:00:00Z") == true, "\(bits)")
        }
        // Just below zero is the last second of 2000.
        let before = outcome(
            binaryPlist(enabledFeatures: [0x33] + bigEndian((-Double.leastNonzeroMagnitude).bitPattern)))
        #expect(before.lines.first?.hasSuffix("found date 2000-12-31T23:59:59Z") == true)
    }

    @Test(arguments: hostileDoubles)
    func aBinaryPlistRealOfAnyBitPatternIsQuotedInTheDiagnostic(bits: UInt64, text: String) {
        let result = outcome(binaryPlist(enabledFeatures: [0x23] + bigEndian(bits)))
        #expect(result.lines.count == 1)
        #expect(result.lines.first?.hasSuffix("found real \(text)") == true, "\(result)")
    }

    @Test func aFourByteRealOfAnyBitPatternIsQuotedInTheDiagnostic() {
        let cases: [([UInt8], String)] = [
            ([0x7F, 0xC0, 0x00, 0x01], "nan(0x20000000)"),
            // Widening to Double quiets a signalling NaN.
            ([0x7F, 0x80, 0x00, 0x01], "nan(0x20000000)"),
            ([0xFF, 0x80, 0x00, 0x00], "-inf"), ([0x00, 0x00, 0x00, 0x01], "1.401298464324817e-45"),
        ]
        for (bytes, text) in cases {
            let result = outcome(binaryPlist(enabledFeatures: [0x22] + bytes))
            #expect(result.lines.first?.hasSuffix("found real \(text)") == true, "\(result)")
        }
    }

    @Test func aNaNDateBesideAValidKeyIsIgnoredLikeAnyOtherKey() {
        let objects: [[UInt8]] = [
            [0xD2, 1, 2, 3, 4], ascii("enabledFeatures"), ascii("expires"), [0xA1, 5],
            [0x33] + bigEndian(Double.nan.bitPattern), ascii("push"),
        ]
        let result = outcome(ConfigWriter.assembleBinaryPlist(objects, referenceSize: 1))
        #expect(result.features == .push)
        #expect(result.lines == [])
    }

    @Test func aNaNDateInADictionaryPassedInIsQuotedInTheDiagnostic() {
        for seconds in [Double.nan, -.nan, .signalingNaN, .infinity, -.greatestFiniteMagnitude] {
            do {
                let result = try ConfigReader().read(
                    dictionary: ["enabledFeatures": Date(timeIntervalSinceReferenceDate: seconds)])
                Issue.record("read \(result.configuration.enabledFeatures) from a date")
            } catch {
                #expect(error.description.hasSuffix("found date \(seconds) seconds after 2001-01-01T00:00:00Z"))
            }
        }
    }

    @Test func binaryPlistDatesReadTheSameAsFoundationFormatsThem() throws {
        let seed = UInt64.random(in: 0 ... .max)
        var generator = SeededGenerator(seed: seed)
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        var samples: [Double] = [0, -1, 1, 86_399, 86_400, -86_401, 3_155_760_000, -3_155_760_000]
        // Years 1601 to 9999 (Foundation's calendar switches to Julian before 1582, the reader stays Gregorian).
        for _ in 0..<2_000 {
            samples.append(Double(Int64.random(in: -12_622_780_800...252_423_993_599, using: &generator)))
        }
        for seconds in samples {
            let expected = formatter.string(from: Date(timeIntervalSinceReferenceDate: seconds))
            let result = outcome(binaryPlist(enabledFeatures: [0x33] + bigEndian((seconds + 0.5).bitPattern)))
            #expect(result.lines.first?.hasSuffix("found date \(expected)") == true, "seed \(seed), \(seconds)")
        }
    }

    @Test func datesOutsideYearsOneTo9999ShowTheirSecondsInstead() {
        let first = outcome(binaryPlist(enabledFeatures: [0x33] + bigEndian((-63_113_904_000.0).bitPattern)))
        #expect(first.lines.first?.hasSuffix("found date 0001-01-01T00:00:00Z") == true)
        let last = outcome(binaryPlist(enabledFeatures: [0x33] + bigEndian((252_423_993_599.9).bitPattern)))
        #expect(last.lines.first?.hasSuffix("found date 9999-12-31T23:59:59Z") == true)
        for seconds in [-63_113_904_000.5, 252_423_993_600] {
            let result = outcome(binaryPlist(enabledFeatures: [0x33] + bigEndian(seconds.bitPattern)))
            #expect(result.lines.first?.hasSuffix("found date \(seconds) seconds after 2001-01-01T00:00:00Z") == true)
        }
    }

    @Test func binaryPlistIntegersOf128BitsAreQuotedExactly() {
        let cases: [([UInt8], String)] = [
            (Array(repeating: 0xFF, count: 16), "-1"),
            ([0x80] + Array(repeating: 0, count: 15), "-170141183460469231731687303715884105728"),
            ([0x7F] + Array(repeating: 0xFF, count: 15), "170141183460469231731687303715884105727"),
            (Array(repeating: 0, count: 7) + [1] + Array(repeating: 0, count: 8), "18446744073709551616"),
        ]
        for (bytes, text) in cases {
            let result = outcome(binaryPlist(enabledFeatures: [0x14] + bytes))
            #expect(result.features == nil)
            #expect(result.lines.first?.contains(text) == true, "\(result)")
        }
        // A 128-bit integer that fits in 64 bits is an ordinary bitmask.
        let small = outcome(binaryPlist(enabledFeatures: [0x14] + Array(repeating: 0, count: 15) + [4]))
        #expect(small.features == .push)
    }

    @Test func xmlAndJSONNumberFormsEndInADiagnostic() {
        let xmlReals = ["nan", "NaN", "-inf", "inf", "1e99999", "-1e-99999", "4.9e-324", "0x1p-1074", "1e309"]
        for text in xmlReals {
            let result = outcome(plist("<key>enabledFeatures</key><real>\(text)</real>"))
            #expect(result.features == nil, "\(text)")
            #expect(result.lines.count == 1, "\(text): \(result)")
        }
        let xmlIntegers = ["99999999999999999999999999999999", "-9223372036854775809", "18446744073709551616"]
        for text in xmlIntegers {
            let result = outcome(plist("<key>enabledFeatures</key><integer>\(text)</integer>"))
            #expect(result.lines.first?.contains(text) == true, "\(text): \(result)")
        }
        let json = [
            "1e99999", "-1e99999", "1e-99999", "0.0000000000000000000000001e-400", "-0.0",
            "123456789012345678901234567890", "-123456789012345678901234567890", "18446744073709551616",
            "1" + String(repeating: "0", count: 5_000),
        ]
        for text in json {
            let result = outcome(#"{"enabledFeatures": \#(text)}"#)
            #expect(result.lines.count == 1, "\(text.prefix(40)): \(result)")
        }
        // Negative zero is zero, not a negative bitmask.
        #expect(outcome(#"{"enabledFeatures": -0}"#).features == [])
    }

    // MARK: - Support

    private func binaryPlist(enabledFeatures object: [UInt8]) -> [UInt8] {
        ConfigWriter.assembleBinaryPlist([[0xD1, 1, 2], ascii("enabledFeatures"), object], referenceSize: 1)
    }

    private func ascii(_ text: String) -> [UInt8] {
        let count = text.utf8.count
        return (count < 15 ? [0x50 | UInt8(count)] : [0x5F, 0x10, UInt8(count)]) + Array(text.utf8)
    }

    private func bigEndian(_ bits: UInt64) -> [UInt8] {
        stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: bits >> UInt64($0)) }
    }
}

import Benchmark
import FeatureGateIAB

/// Decoding TC strings.
///
/// - `TCF.decode.1000-vendors` (issue 13): the core segment with 1,000 vendor consents as a bit field and 1,000
///   vendor legitimate interests as ranges, plus a disclosed-vendors segment of 1,000. Time and mallocs are
///   reported, not budgeted.
/// - `TCF.decode.4095-every-vendor-restrictions` (issue 22): a 36 KB string of 4,095 publisher restrictions, each
///   one range entry covering vendors 1–65535. Its mallocs and malloc'd bytes have a ceiling (`report.py`): the
///   decode that expanded the ranges (an 8 KB bit vector per restriction) asked for 33.9 MB, 56 times the ceiling.
func registerTCFBenchmarks() {
    let string = TCFBenchmarkString.thousandVendors
    precondition((try? TCString(string))?.vendorConsents.count == 1_000, "the benchmark string does not decode")
    Benchmark("TCF.decode.1000-vendors", configuration: .reported(calls: .one)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? TCString(string))
        }
    }

    let restricted = TCFBenchmarkString.everyVendorRestricted(times: 4_095)
    let decoded = (try? TCString(restricted))?.publisherRestrictions ?? []
    precondition(
        decoded.count == 4_095 && decoded.allSatisfy { $0.vendors.ranges == [1...65535] },
        "the restriction string does not decode to 4,095 ranges of every vendor")
    Benchmark(
        "TCF.decode.4095-every-vendor-restrictions",
        configuration: .reported(calls: .one, extraMetrics: [.mallocBytesCount])
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? TCString(restricted))
        }
    }
}

/// Builds the benchmark's TC string bit by bit (the benchmark must not depend on test code).
enum TCFBenchmarkString {
    static var thousandVendors: String {
        var bits: [Bool] = []
        func append(_ value: Int, _ width: Int) {
            for shift in stride(from: width - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
        }
        // Core: version 2, dates, CMP 7 v1, screen 1, "EN", vendor list 150, policy 4, service-specific, special feature 1,
        // purposes 1-10 consented, 2 and 7-10 legitimate interest, "DE".
        append(2, 6)
        append(17_000_000_000, 36)
        append(17_000_000_000, 36)
        append(7, 12)
        append(1, 12)
        append(1, 6)
        append(4, 6)
        append(13, 6)
        append(150, 12)
        append(4, 6)
        append(1, 1)  // IsServiceSpecific: always 1 under policy version 4
        append(0, 1)
        append(1 << 11, 12)
        append(0xFFC000, 24)
        append(0x43C000, 24)
        append(0, 1)
        append(3, 6)
        append(4, 6)
        // Vendor consents: 1,000 of the first 1,500 IDs (two of every three), as a bit field.
        append(1_500, 16)
        append(0, 1)
        for id in 1...1_500 { bits.append(id % 3 != 0) }
        // Vendor legitimate interests: the same 1,000 IDs as 500 ranges of two.
        append(1_500, 16)
        append(1, 1)
        append(500, 12)
        for start in stride(from: 1, to: 1_500, by: 3) {
            append(1, 1)
            append(start, 16)
            append(start + 1, 16)
        }
        append(0, 12)  // no publisher restrictions
        let core = base64URL(bits)
        // Disclosed vendors 1-1000 as a bit field.
        bits = []
        append(1, 3)
        append(1_000, 16)
        append(0, 1)
        bits += Array(repeating: true, count: 1_000)
        return core + "." + base64URL(bits)
    }

    /// Issue 22's string: a core segment with no vendors and `times` publisher restrictions (purposes 1–24 and
    /// types 0–2 in turn), each one range entry covering vendors 1–65535. 4,095 times make 36 KB.
    static func everyVendorRestricted(times: Int) -> String {
        var bits: [Bool] = []
        func append(_ value: Int, _ width: Int) {
            for shift in stride(from: width - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
        }
        // Version 2, dates, CMP 7 v1, screen 1, "EN", vendor list 150, policy 4, service-specific, no purposes, "DE".
        for (value, width) in [
            (2, 6), (17_000_000_000, 36), (17_000_000_000, 36), (7, 12), (1, 12), (1, 6), (4, 6), (13, 6), (150, 12),
            (4, 6), (1, 1), (0, 1), (0, 12), (0, 24), (0, 24), (0, 1), (3, 6), (4, 6),
        ] {
            append(value, width)
        }
        append(0, 17)  // no vendor consents (MaxVendorId 0, bit field)
        append(0, 17)  // no vendor legitimate interests
        append(times, 12)
        for index in 0..<times {
            append(index % 24 + 1, 6)
            append(index % 3, 2)
            append(1, 12)  // one entry: a range 1-65535
            append(1, 1)
            append(1, 16)
            append(65_535, 16)
        }
        return base64URL(bits)
    }

    private static func base64URL(_ bits: [Bool]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var result = ""
        for start in stride(from: 0, to: bits.count, by: 6) {
            var value = 0
            for offset in 0..<6 { value = value << 1 | (start + offset < bits.count && bits[start + offset] ? 1 : 0) }
            result.append(alphabet[value])
        }
        return result
    }
}

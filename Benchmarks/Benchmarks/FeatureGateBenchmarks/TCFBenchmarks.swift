import Benchmark
import FeatureGateIAB

/// Decoding a TC string with 1,000 vendors (issue 13): the core segment with 1,000 vendor consents as a bit field
/// and 1,000 vendor legitimate interests as ranges, plus a disclosed-vendors segment of 1,000. Time and mallocs
/// are reported, not budgeted.
func registerTCFBenchmarks() {
    let string = TCFBenchmarkString.thousandVendors
    precondition((try? TCString(string))?.vendorConsents.count == 1_000, "the benchmark string does not decode")
    Benchmark("TCF.decode.1000-vendors", configuration: .reported(calls: .one)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? TCString(string))
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
        // Core: version 2, dates, CMP 7 v1, screen 1, "EN", vendor list 150, policy 4, flags, special feature 1,
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
        append(0, 2)
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

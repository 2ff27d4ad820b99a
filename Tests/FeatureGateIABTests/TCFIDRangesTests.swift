import FeatureGateIAB
import PackageTestSupport
import Testing

/// The range-kept ID set behind publisher restrictions: normalised ranges, membership at every edge, and the same
/// IDs as a bit-vector set built from the same input.
@Suite struct TCFIDRangesTests {
    @Test func rangesAreSortedMergedAndClampedToPositiveIDs() {
        let set = TCString.IDRanges(ranges: [50...60, -5...2, 3...3, 61...70, 100...100, 55...58, -9...0])
        #expect(set.ranges == [1...3, 50...70, 100...100])
        #expect(set.count == 25)
        #expect(set.description == "[1-3, 50-70, 100]")
        #expect(TCString.IDRanges().isEmpty && TCString.IDRanges([0, -1]).isEmpty)
        #expect(TCString.IDRanges([3, 1, 2, 9]) == TCString.IDRanges(ranges: [1...3, 9...9]))
    }

    @Test func randomRangesHoldExactlyTheIDsABitVectorHolds() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        for iteration in 0..<300 {
            let ranges = (0..<Int.random(in: 0...12, using: &random)).map { _ -> ClosedRange<Int> in
                let start = Int.random(in: -3...200, using: &random)
                return start...(start + Int.random(in: 0...30, using: &random))
            }
            let set = TCString.IDRanges(ranges: ranges)
            var bits = TCString.IDSet()
            for range in ranges { bits.insert(range) }
            let context = "seed \(seed), iteration \(iteration): \(ranges)"
            #expect(Array(set) == bits.ids, "\(context)")
            #expect(set.count == bits.count, "\(context)")
            let disagreeing = (-1...232).filter { set.contains($0) != bits.contains($0) }
            #expect(disagreeing.isEmpty, "\(context)")
            // Ascending, and neither overlapping nor touching: the fewest ranges for these IDs.
            #expect(zip(set.ranges, set.ranges.dropFirst()).allSatisfy { $0.upperBound + 1 < $1.lowerBound })
        }
    }
}

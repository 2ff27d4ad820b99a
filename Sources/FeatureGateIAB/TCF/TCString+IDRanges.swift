extension TCString {
    /// A set of positive IDs kept as ranges, as a publisher restriction lists its vendors.
    ///
    /// One range entry of a TC string covers up to 65,535 vendors in 33 bits, and a string can carry thousands of
    /// them. Kept as ranges (ascending, merged), a set costs 16 bytes per range whatever the ranges cover, so memory
    /// grows with the string's length, not with the IDs it names. Membership is a binary search over ``ranges``.
    /// Iterating the set visits every ID (up to 65,535 per range); read ``ranges`` to stay proportional to the string.
    /// IDs are 1-based; zero and negative IDs are never members.
    public struct IDRanges: Sendable, Hashable, Sequence, ExpressibleByArrayLiteral, CustomStringConvertible {
        /// The ranges, ascending, neither overlapping nor touching (`[1...3, 5...5]`, never `[1...2, 3...3]`).
        public private(set) var ranges: [ClosedRange<Int>]

        /// An empty set.
        public init() {
            ranges = []
        }

        /// The IDs of `ranges`, given in any order, overlapping or not; IDs below 1 are ignored.
        public init(ranges: some Sequence<ClosedRange<Int>>) {
            self.init(normalizing: Array(ranges))
        }

        /// A set of `ids`; IDs below 1 are ignored.
        public init<IDs: Sequence<Int>>(_ ids: IDs) {
            self.init(normalizing: ids.map { $0...$0 })
        }

        /// A set of the listed IDs; IDs below 1 are ignored.
        public init(arrayLiteral ids: Int...) {
            self.init(ids)
        }

        /// Sorts and merges `ranges` in place: no allocation beyond the array given, when the caller hands it over
        /// (`consume`).
        init(normalizing ranges: consuming [ClosedRange<Int>]) {
            ranges.removeAll { $0.upperBound < 1 }
            ranges.sort { $0.lowerBound < $1.lowerBound }
            var kept = 0
            // By index: a for-in loop would hold the buffer, and the writes below would copy it.
            for index in ranges.indices {
                let range = Swift.max(ranges[index].lowerBound, 1)...ranges[index].upperBound
                if kept > 0, ranges[kept - 1].upperBound >= range.lowerBound - 1 {
                    let merged = ranges[kept - 1]
                    ranges[kept - 1] = merged.lowerBound...Swift.max(merged.upperBound, range.upperBound)
                } else {
                    ranges[kept] = range
                    kept += 1
                }
            }
            ranges.removeLast(ranges.count - kept)
            self.ranges = consume ranges
        }

        /// Whether `id` is in the set.
        public func contains(_ id: Int) -> Bool {
            // The last range starting at or before `id` is the only one that can hold it.
            var low = 0
            var high = ranges.count
            while low < high {
                let middle = (low + high) / 2
                if ranges[middle].lowerBound <= id { low = middle + 1 } else { high = middle }
            }
            return low > 0 && ranges[low - 1].contains(id)
        }

        /// Whether the set is empty.
        public var isEmpty: Bool { ranges.isEmpty }

        /// The number of IDs in the set (not of ranges).
        public var count: Int { ranges.reduce(0) { $0 + $1.count } }

        /// The IDs, ascending, one range after another.
        public func makeIterator() -> FlattenSequence<[ClosedRange<Int>]>.Iterator {
            ranges.joined().makeIterator()
        }

        /// The ranges as a list, a single ID alone, e.g. `[1-65535]` or `[4, 7-9]`.
        public var description: String { "[\(rangeList)]" }

        /// The ranges joined by `, `, a single ID alone (`4, 7-9`); empty for an empty set.
        package var rangeList: String {
            ranges.map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
                .joined(separator: ", ")
        }
    }
}

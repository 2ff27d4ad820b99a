extension TCString {
    /// A set of positive IDs (purposes, special features, vendors) decoded from a consent string.
    ///
    /// Stored as a bit vector, so a membership test is one shift and a mask, and a string with thousands of vendors
    /// decodes without a hash table. IDs are 1-based, as in the IAB specifications; zero and negative IDs are never
    /// members.
    public struct IDSet: Sendable, Hashable, Sequence, ExpressibleByArrayLiteral, CustomStringConvertible {
        private var words: [UInt64] = []

        /// An empty set.
        public init() {}

        /// An empty set with room for IDs up to `maximumID` without growing.
        init(reservingCapacityFor maximumID: Int) {
            words = Array(repeating: 0, count: (Swift.max(maximumID, 0) + 63) >> 6)
        }

        /// A set of `ids`; IDs below 1 are ignored.
        public init<IDs: Sequence<Int>>(_ ids: IDs) {
            for id in ids { insert(id) }
        }

        /// A set of the listed IDs; IDs below 1 are ignored.
        public init(arrayLiteral ids: Int...) {
            self.init(ids)
        }

        /// Whether `id` is in the set.
        public func contains(_ id: Int) -> Bool {
            guard id > 0 else { return false }
            let word = (id - 1) >> 6
            return word < words.count && words[word] & (1 << UInt64((id - 1) & 63)) != 0
        }

        /// Adds `id`; an ID below 1 is ignored.
        public mutating func insert(_ id: Int) {
            guard id > 0 else { return }
            let word = (id - 1) >> 6
            if word >= words.count { words.append(contentsOf: repeatElement(0, count: word + 1 - words.count)) }
            words[word] |= 1 << UInt64((id - 1) & 63)
        }

        /// Adds every ID of `range`; IDs below 1 are ignored. Fills whole words at a time, so a range of thousands of
        /// IDs costs a few dozen operations.
        public mutating func insert(_ range: ClosedRange<Int>) {
            let low = Swift.max(range.lowerBound, 1) - 1
            let high = range.upperBound - 1
            guard low <= high else { return }
            let lastWord = high >> 6
            if lastWord >= words.count { words.append(contentsOf: repeatElement(0, count: lastWord + 1 - words.count)) }
            for word in (low >> 6)...(high >> 6) {
                let first: UInt64 = word == low >> 6 ? UInt64(low & 63) : 0
                let last: UInt64 = word == high >> 6 ? UInt64(high & 63) : 63
                let width = last - first + 1
                let mask: UInt64 = width == 64 ? ~0 : ((1 << width) - 1) << first
                words[word] |= mask
            }
        }

        /// Whether the set is empty.
        public var isEmpty: Bool { words.allSatisfy { $0 == 0 } }

        /// The number of IDs in the set.
        public var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

        /// The IDs, ascending.
        public var ids: [Int] { Array(self) }

        /// The IDs that are in both sets.
        public func intersection(_ other: TCString.IDSet) -> TCString.IDSet {
            var result = TCString.IDSet()
            result.words = zip(words, other.words).map { $0 & $1 }
            return result
        }

        /// The IDs, ascending.
        public func makeIterator() -> Iterator {
            Iterator(words: words)
        }

        /// Iterates over the IDs, ascending.
        public struct Iterator: IteratorProtocol {
            fileprivate let words: [UInt64]
            private var wordIndex = 0
            private var remaining: UInt64

            fileprivate init(words: [UInt64]) {
                self.words = words
                remaining = words.first ?? 0
            }

            /// The next ID, or `nil` after the last.
            public mutating func next() -> Int? {
                while remaining == 0 {
                    wordIndex += 1
                    guard wordIndex < words.count else { return nil }
                    remaining = words[wordIndex]
                }
                let bit = remaining.trailingZeroBitCount
                remaining &= remaining - 1
                return wordIndex * 64 + bit + 1
            }
        }

        /// Two sets are equal when they hold the same IDs (however many empty words each carries).
        public static func == (lhs: TCString.IDSet, rhs: TCString.IDSet) -> Bool {
            let count = Swift.max(lhs.words.count, rhs.words.count)
            for index in 0..<count where lhs.word(index) != rhs.word(index) { return false }
            return true
        }

        /// Hashes the IDs, consistently with `==`.
        public func hash(into hasher: inout Hasher) {
            var end = words.count
            while end > 0 && words[end - 1] == 0 { end -= 1 }
            for index in 0..<end { hasher.combine(words[index]) }
        }

        /// The IDs as a list, e.g. `[1, 3, 7]`.
        public var description: String { "\(ids)" }

        private func word(_ index: Int) -> UInt64 { index < words.count ? words[index] : 0 }
    }
}

/// How deep a parsed document's containers may nest and how many values it may hold, counted as a parser reads it.
///
/// It only counts; each parser says in its own words which limit a document broke.
package struct NestingBudget {
    /// The deepest a container may be: 1 for the top level.
    @usableFromInline package let maximumDepth: Int
    /// How many values a document may hold, containers included.
    @usableFromInline package let maximumValueCount: Int
    /// How many values have been counted.
    @usableFromInline package internal(set) var valueCount = 0

    /// A budget of `maximumDepth` levels and `maximumValueCount` values.
    package init(maximumDepth: Int, maximumValueCount: Int = .max) {
        self.maximumDepth = maximumDepth
        self.maximumValueCount = maximumValueCount
    }

    /// Counts one more value; `false` once the document holds more than ``maximumValueCount``.
    @inlinable package mutating func countValue() -> Bool {
        valueCount += 1
        return valueCount <= maximumValueCount
    }

    /// Whether a container at `depth` (1 for the top level) is allowed.
    @inlinable package func allows(depth: Int) -> Bool { depth <= maximumDepth }
}

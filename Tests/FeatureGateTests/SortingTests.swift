import FeatureGate
import PackageTestSupport
import Testing

/// The module's one sort (issue 47, a smaller binary: each `sorted()` of another type was its own copy of the standard
/// library's sort) orders as the standard library does, equal names keeping their order, so every order the package
/// writes or shows (the checkpoint's answers, the settings' rows, revoke-all's refusals) is what it was.
@Suite struct SortingTests {
    /// Names with many duplicates, an empty one, and ones that differ only past ASCII or in their Unicode form.
    static func names(count: Int, seed: UInt64) -> [String] {
        var generator = SeededGenerator(seed: seed)
        let pieces = ["", "a", "b", "ab", "B", "é", "e\u{301}", "z", "analytics", "ads", "😀", "a b"]
        return (0..<count).map { _ in
            (0..<Int.random(in: 0...3, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
                .joined()
        }
    }

    @Test(arguments: [0, 1, 2, 17, 500])
    func sortedByNameOrdersAsTheStandardLibrary(count: Int) {
        let names = Self.names(count: count, seed: UInt64(count))
        #expect(names.sorted(byName: { $0 }) == names.sorted())
        let categories = Set(names.map(ConsentCategory.init(rawValue:)))
        #expect(categories.sortedByName() == categories.sorted())
    }

    @Test(arguments: [2, 17, 500])
    func equalNamesKeepTheirOrder(count: Int) {
        let names = Self.names(count: count, seed: UInt64(count) &* 31)
        let entries = names.enumerated().map { (name: $0.element, position: $0.offset) }
        let sorted = entries.sorted(byName: \.name)
        #expect(sorted.map(\.position) == entries.sorted { $0.name < $1.name }.map(\.position))
        for (earlier, later) in zip(sorted, sorted.dropFirst()) where earlier.name == later.name {
            #expect(earlier.position < later.position)
        }
    }

    @Test func ascendingOrderIsThePermutationThatSorts() {
        #expect(ascendingOrder(of: ["c", "a", "b", "a"]) == [1, 3, 2, 0])
        #expect(ascendingOrder(of: []) == [])
    }
}

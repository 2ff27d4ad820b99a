/// The positions that put `keys` in ascending order, equal keys keeping their order (a stable sort).
///
/// The module's sorts go through here, so the standard library's sort is compiled into it once: each `sorted()` of
/// another element type, or with another closure, was its own copy of it (13 copies, about 3.5 KB each).
@inline(never)
package func ascendingOrder(of keys: [String]) -> [Int] {
    keys.indices.sorted { keys[$0] < keys[$1] }
}

extension Sequence {
    /// The elements in ascending order of `name` (equal names keep their order), as `sorted { name($0) < name($1) }`.
    package func sorted(byName name: (Element) -> String) -> [Element] {
        let elements = Array(self)
        return ascendingOrder(of: elements.map(name)).map { elements[$0] }
    }
}

extension Sequence<ConsentCategory> {
    /// The categories sorted by name, as `sorted()`.
    package func sortedByName() -> [ConsentCategory] { sorted(byName: \.rawValue) }
}

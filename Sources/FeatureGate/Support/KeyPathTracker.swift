/// The key path of the value a parser or a tree walk is in, for the messages that name a key: `a.b[2]`.
package struct KeyPathTracker {
    /// How the path of the top-level value reads.
    package static let root = "(root)"

    private var components: [String] = []

    /// The path of the top-level value.
    package init() {}

    /// Enters the value of `key` in the current dictionary.
    package mutating func push(key: String) { components.append(components.isEmpty ? key : "." + key) }
    /// Enters the element at `index` of the current array.
    package mutating func push(index: Int) { components.append("[\(index)]") }
    /// Leaves the value last entered.
    package mutating func pop() { components.removeLast() }

    /// The path of the current value, ``root`` at the top.
    package var current: String { components.isEmpty ? Self.root : components.joined() }

    /// The path of `key` inside the current container.
    package func appending(key: String) -> String {
        components.joined() + (components.isEmpty ? key : "." + key)
    }
}

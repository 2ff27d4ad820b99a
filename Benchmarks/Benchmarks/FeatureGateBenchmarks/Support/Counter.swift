import Synchronization

/// A thread-safe count for observers to bump, so a benchmark can check that every change was delivered.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    /// Adds one.
    func increment() {
        count.add(1, ordering: .relaxed)
    }

    /// The count so far.
    var value: Int {
        count.load(ordering: .relaxed)
    }
}

/// Runs an actor's calls one after another, in the order they were made: each waits until the one before it has
/// ended. An actor alone would interleave two calls at their `await`s.
///
/// Keep it as a `var` of the actor and start every call through ``enqueue(on:_:)`` from the actor's own methods.
package struct SerialCalls: Sendable {
    /// The last call started (ended or not).
    private var last: Task<Void, Never>?

    /// No call made yet.
    package init() {}

    /// Starts `body` on `actor` once every call enqueued before has ended, and returns its task.
    package mutating func enqueue<A: Actor, Value: Sendable>(
        on actor: isolated A, _ body: @escaping @Sendable (isolated A) async -> Value
    ) -> Task<Value, Never> {
        let previous = last
        let next = Task {
            await previous?.value
            return await body(actor)
        }
        last = Task { _ = await next.value }
        return next
    }
}

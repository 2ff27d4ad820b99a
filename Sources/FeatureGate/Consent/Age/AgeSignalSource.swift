import Foundation

/// Turns declared age ranges into the consent manager's child mark (``ConsentManager/setChild(_:)``) under the
/// policy's ``ConsentPolicy/childAge`` rule, and keeps the last answer so the mark holds across launches until the
/// next answer.
///
/// At launch call ``restore()`` (it applies the kept answer, and writes nothing); when an answer arrives (from
/// `FeatureGateAgeRange`'s `AgeRangeService` adapter, or anywhere else) call ``apply(_:)``. Marking a child takes
/// effect before the answer is written (a take-away never waits for the disk); unmarking one waits for it, so a
/// failed write leaves the user marked.
public actor AgeSignalSource {
    /// The consent manager whose child mark this sets.
    public nonisolated let consentManager: ConsentManager
    private let store: any AgeRangeAnswerStore
    /// The calls, one at a time: each waits for the last one started, so answers are kept and applied in the order
    /// they came, and the kept answer and the mark never disagree (an actor alone would interleave two calls at their
    /// `await`s).
    private var calls = SerialCalls()

    /// Creates a source; nothing is read until ``restore()``.
    public init(consentManager: ConsentManager, store: any AgeRangeAnswerStore) {
        self.consentManager = consentManager
        self.store = store
    }

    /// Applies the kept answer, if any, and returns it. Writes nothing.
    ///
    /// - Throws: ``AgeRangeAnswerStoreError`` when the kept answer cannot be read; the user is then marked a child
    ///   (fail closed) until the next answer.
    @discardableResult
    public func restore() async throws(AgeRangeAnswerStoreError) -> AgeRangeAnswer? {
        try await serially { source in
            let answer: AgeRangeAnswer?
            do throws(AgeRangeAnswerStoreError) {
                answer = try source.store.load()
            } catch {
                await source.consentManager.setChild(true)
                return .failure(error)
            }
            if let answer {
                await source.consentManager.setChild(source.consentManager.policy.childAge.isChild(answer))
            }
            return .success(answer)
        }.get()
    }

    /// Applies a new answer: sets the child mark it implies and keeps the answer. Calls apply in the order made.
    ///
    /// - Returns: Whether the answer marks the user as a child.
    /// - Throws: ``AgeRangeAnswerStoreError`` when the answer could not be kept; a child mark is applied anyway, an
    ///   unmarking is not.
    @discardableResult
    public func apply(_ answer: AgeRangeAnswer) async throws(AgeRangeAnswerStoreError) -> Bool {
        try await serially { source in
            let isChild = source.consentManager.policy.childAge.isChild(answer)
            // A take-away does not wait for the disk; giving back waits until the answer is kept.
            if isChild { await source.consentManager.setChild(true) }
            do throws(AgeRangeAnswerStoreError) {
                try source.store.save(answer)
            } catch {
                return .failure(error)
            }
            if !isChild { await source.consentManager.setChild(false) }
            return .success(isChild)
        }.get()
    }

    private func serially<Value: Sendable>(
        _ body: @escaping @Sendable (isolated AgeSignalSource) async -> Result<Value, AgeRangeAnswerStoreError>
    ) async -> Result<Value, AgeRangeAnswerStoreError> {
        await calls.enqueue(on: self, body).value
    }
}

import FeatureGate
import Foundation

/// A feature store that outlives the managers using it (so a test can relaunch) and fails when told to.
final class FaultyFeatureStore: FeatureStore, CustomStringConvertible {
    struct Failure: Error {}
    private let state = LockedValue<(record: Data?, failNextSave: Bool, saves: Int)>((nil, false, 0))

    /// The next `save` throws and stores nothing.
    func failNextSave() { state.withLock { $0.failNextSave = true } }
    /// Replaces the stored bytes, as a damaged disk would.
    func corrupt() { state.withLock { $0.record = Data("{\"version\":".utf8) } }
    var record: Data? { state.withLock { $0.record } }
    var saves: Int { state.withLock { $0.saves } }
    var description: String { "faulty store" }

    func load() throws -> Data? { state.withLock { $0.record } }

    func save(_ record: Data) throws {
        try state.withLock {
            if $0.failNextSave {
                $0.failNextSave = false
                throw Failure()
            }
            $0.saves += 1
            $0.record = record
        }
    }

    func remove() throws { state.withLock { $0.record = nil } }
}

/// A consent ledger in memory whose next append can be made to fail, as a full disk would.
final class FaultyConsentLedger: ConsentLedger, CustomStringConvertible {
    struct Failure: Error {}
    private let inner = InMemoryConsentLedger()
    private let failing = LockedValue(false)

    /// The next `append` throws and records nothing.
    func failNextAppend() { failing.withLock { $0 = true } }
    var description: String { "faulty ledger" }

    func load() throws -> ConsentLedgerContents { try inner.load() }

    func append(_ record: ConsentRecord) throws {
        let fail = failing.withLock { failing in
            defer { failing = false }
            return failing
        }
        if fail { throw Failure() }
        try inner.append(record)
    }

    func exportJSONLines() throws -> Data { try inner.exportJSONLines() }
}

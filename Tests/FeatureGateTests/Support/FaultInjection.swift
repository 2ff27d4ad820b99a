import FeatureGate
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

/// A store whose record cannot be read for a while (permissions, data protection, an I/O error).
final class FlakyFeatureStore: FeatureStore, CustomStringConvertible {
    private let state: LockedValue<(record: Data?, unreadable: Bool, saves: Int, removes: Int)>
    /// What a load throws while unreadable.
    let problem: FileStoreError.Problem

    init(record: Data?, unreadable: Bool, problem: FileStoreError.Problem = .system(EACCES)) {
        state = LockedValue((record, unreadable, 0, 0))
        self.problem = problem
    }

    var unreadable: Bool {
        get { state.withLock { $0.unreadable } }
        set { state.withLock { $0.unreadable = newValue } }
    }
    var record: FeatureStateRecord? { state.withLock { $0.record }.flatMap { try? FeatureStateRecord(decoding: $0) } }
    var writes: Int { state.withLock { $0.saves + $0.removes } }
    var description: String { "flaky store" }

    func load() throws -> Data? {
        try state.withLock { state in
            if state.unreadable { throw FileStoreError(path: "flaky", operation: .open, problem: problem) }
            return state.record
        }
    }

    func save(_ record: Data) throws {
        state.withLock {
            $0.saves += 1
            $0.record = record
        }
    }

    func remove() throws {
        state.withLock {
            $0.removes += 1
            $0.record = nil
        }
    }
}

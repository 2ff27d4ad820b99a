import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// A store that records every call, and can be made to fail.
final class RecordingFeatureStore: FeatureStore, CustomStringConvertible {
    struct Calls: Equatable {
        var loads = 0
        var saves = 0
        var removes = 0
    }

    private let inner: LockedValue<(record: Data?, calls: Calls)>
    let failLoad: Bool
    let failSave: Bool

    init(record: Data? = nil, failLoad: Bool = false, failSave: Bool = false) {
        inner = LockedValue((record, Calls()))
        self.failLoad = failLoad
        self.failSave = failSave
    }

    convenience init(stored features: Feature) {
        self.init(record: FeatureStateRecord(enabledFeatures: features).encoded())
    }

    struct Failure: Error {}

    var calls: Calls { inner.withLock { $0.calls } }
    var record: Data? { inner.withLock { $0.record } }
    var storedFeatures: Feature? { record.flatMap { try? FeatureStateRecord(decoding: $0).enabledFeatures } }
    var description: String { "recording store" }

    func load() throws -> Data? {
        try inner.withLock {
            $0.calls.loads += 1
            if failLoad { throw Failure() }
            return $0.record
        }
    }

    func save(_ record: Data) throws {
        try inner.withLock {
            $0.calls.saves += 1
            if failSave { throw Failure() }
            $0.record = record
        }
    }

    func remove() throws {
        inner.withLock {
            $0.calls.removes += 1
            $0.record = nil
        }
    }
}

/// Collects values from any thread.
final class Collector<Value: Sendable>: Sendable {
    private let values = LockedValue<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

/// A fresh directory under the system's temporary directory, removed by `cleanUp()`.
struct TemporaryDirectory {
    let url: URL
    init() {
        url = URL(filePath: NSTemporaryDirectory()).appending(path: "featuregate-tests-\(UUID().uuidString)")
    }
    var path: String { url.path(percentEncoded: false) }
    func cleanUp() { try? FileManager.default.removeItem(at: url) }
}

func manager(
    _ features: Feature = [],
    store: any FeatureStore = InMemoryFeatureStore(),
    catalog: FeatureCatalog = .builtIn
) -> PrivacyManager {
    PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: features), store: store, catalog: catalog)
}

/// Waits until `condition` holds, up to `seconds`; returns whether it did. Bounds a wait, asserts no duration.
func eventually(within seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { return false }
        usleep(2_000)
    }
    return true
}

let fixedTime = Date(timeIntervalSince1970: 1_800_000_000.125)

func record(
    _ category: ConsentCategory,
    _ previous: ConsentStatus,
    _ new: ConsentStatus,
    version: Int = 1,
    source: ConsentSource = .user
) -> ConsentRecord {
    ConsentRecord(
        category: category,
        previousStatus: previous,
        newStatus: new,
        time: fixedTime,
        policyVersion: version,
        source: source
    )
}

extension ConsentRecord {
    func with(time: Date) -> ConsentRecord {
        var copy = self
        copy.time = time
        return copy
    }
}

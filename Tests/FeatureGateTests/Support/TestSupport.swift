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

/// Starts the `feature-store-writer` fixture and waits until its first save, so a kill lands inside its loop.
func startFixture(mode: String, path: String, size: Int = 65_536) throws -> Process {
    let process = Process()
    process.executableURL = try builtProduct("feature-store-writer")
    process.arguments = [mode, path, String(size)]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let line = output.fileHandleForReading.readData(ofLength: 7)
    #expect(String(decoding: line, as: UTF8.self) == "saving\n")
    return process
}

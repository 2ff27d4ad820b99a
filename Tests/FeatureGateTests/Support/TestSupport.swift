import FeatureGate
import Foundation
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
        self.init(record: FeatureStateRecord.encode(features))
    }

    struct Failure: Error {}

    var calls: Calls { inner.withLock { $0.calls } }
    var record: Data? { inner.withLock { $0.record } }
    var storedFeatures: Feature? { record.flatMap { try? FeatureStateRecord.decode($0) } }
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

/// An executable of the package, found in the directory the tests were built into.
///
/// That directory is found from the test binary itself, not from `CommandLine.arguments[0]`: on macOS `swift test`
/// runs the tests inside a runner (`xctest`, or the swift-testing helper) that lives in the toolchain, and loads
/// the binary from the `.xctest` bundle in the build directory. `FEATUREGATE_BUILT_PRODUCTS` (a directory)
/// overrides the search; `.build/debug` under the package root is the last resort. When the executable is in none
/// of these, the test fails with a message saying so: it never passes by skipping the check.
func builtProduct(_ name: String) throws -> URL {
    var directories: [URL] = []
    if let override = ProcessInfo.processInfo.environment["FEATUREGATE_BUILT_PRODUCTS"] {
        directories.append(URL(filePath: override, directoryHint: .isDirectory))
    }
    if let binary = testBinaryPath() {
        // Linux: .build/<triple>/debug/FeatureGatePackageTests.xctest (an executable);
        // macOS: .build/<triple>/debug/FeatureGatePackageTests.xctest/Contents/MacOS/FeatureGatePackageTests.
        var directory = URL(filePath: binary).deletingLastPathComponent()
        for _ in 0..<4 {
            directories.append(directory)
            directory.deleteLastPathComponent()
        }
    }
    directories.append(testPackageRoot.appending(path: ".build/debug", directoryHint: .isDirectory))
    for directory in directories {
        let candidate = directory.appending(path: name)
        if FileManager.default.isExecutableFile(atPath: candidate.path(percentEncoded: false)) { return candidate }
    }
    throw MissingBuiltProduct(name: name, searched: directories.map { $0.path(percentEncoded: false) })
}

/// The path of the binary that holds the tests.
private func testBinaryPath() -> String? {
    #if canImport(Darwin)
    // The image this code is in: the binary inside the .xctest bundle, whatever process loaded it.
    var info = Dl_info()
    if dladdr(#dsohandle, &info) != 0, let file = info.dli_fname { return String(cString: file) }
    return Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") }?.executablePath
    #else
    // On Linux the tests run in their own executable.
    return Bundle.main.executablePath ?? CommandLine.arguments.first
    #endif
}

/// A test needs an executable of the package that is not built.
struct MissingBuiltProduct: Error, CustomStringConvertible {
    var name: String
    var searched: [String]
    var description: String {
        "\(name) is not built: looked in \(searched.joined(separator: ", ")). Build it with "
            + "`swift build --build-tests` (swift test does), or set FEATUREGATE_BUILT_PRODUCTS to its directory."
    }
}

/// The package root, found from this file's path.
private let testPackageRoot: URL = {
    var url = URL(filePath: #filePath)
    for _ in 0..<4 { url.deleteLastPathComponent() }
    return url
}()

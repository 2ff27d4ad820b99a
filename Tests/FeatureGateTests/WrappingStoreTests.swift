import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// An app's store that wraps ``FileFeatureStore`` (the protocol is public) keeps the promise a plain file store
/// keeps: a disable behind another process's lock is durable before the call returns, once the wrapper says where
/// its file is (``FeatureStore/recordFile``); a store that says nothing gets a diagnostic that the "no" is in memory
/// only.
@Suite struct WrappingStoreTests {
    /// An app's wrapper: counts its saves, keeps the record in the wrapped file store.
    final class CountingStore: FeatureStore, @unchecked Sendable {
        let inner: FileFeatureStore
        let saysWhere: Bool
        init(_ inner: FileFeatureStore, saysWhere: Bool) {
            self.inner = inner
            self.saysWhere = saysWhere
        }
        func load() throws -> Data? { try inner.load() }
        func save(_ record: Data) throws { try inner.save(record) }
        func remove() throws { try inner.remove() }
        func update(_ transform: (Data?) -> Data?) throws { try inner.update(transform) }
        var recordFile: URL? { saysWhere ? inner.recordFile : nil }
    }

    /// Takes the data directory's lock as another process would (its own open file), until the result is called.
    static func holdLock(of data: PrivacyDataDirectory) -> () -> Void {
        let fd = open(
            data.url.path(percentEncoded: false) + "/" + PrivacyDataDirectory.lockFileName, O_RDWR | O_CREAT, 0o600)
        _ = flock(fd, LOCK_EX)
        return { _ = close(fd) }
    }

    @Test(arguments: [true, false])
    func aDisableThroughAWrapperOfTheFileStoreIsDurableOrSaysItIsInMemoryOnly(saysWhere: Bool) throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let diagnostics = Collector<PrivacyManagerDiagnostic>()
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []),
            store: CountingStore(FileFeatureStore(url: data.stateFile), saysWhere: saysWhere),
            diagnosticHandler: { diagnostics.append($0) })
        privacy.enableFeatures([.push, .analytics])

        let release = Self.holdLock(of: data)
        privacy.disableFeatures(.push)
        // The process is killed now, the other one still holding the lock: a fresh start is all that is left.
        let fresh = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile))
        release()

        let inMemoryOnly = diagnostics.all.contains { if case .takeAwayNotDurable = $0 { true } else { false } }
        if saysWhere {
            #expect(!fresh.isEnabled(.push) && fresh.isEnabled(.analytics))
            #expect(!inMemoryOnly, "\(diagnostics.all)")
        } else {
            #expect(inMemoryOnly, "\(diagnostics.all)")
        }
    }
}

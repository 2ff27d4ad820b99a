#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct FileFeatureStoreTests {
    @Test func loadOfAMissingFileReturnsNilAndCreatesNothing() throws {
        let directory = TemporaryDirectory()
        let store = FileFeatureStore(url: directory.url.appending(path: "a/b/features.json"))
        #expect(try store.load() == nil)
        try store.remove()
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test func saveCreatesDirectoriesAndAPrivateFileThenRoundTrips() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let url = directory.url.appending(path: "a/b/features.json")
        let store = FileFeatureStore(url: url)
        try store.save(Data("one".utf8))
        try store.save(Data("two".utf8))
        #expect(try store.load() == Data("two".utf8))
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path(percentEncoded: false))
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        // Only the file itself remains, and the lock in the directory the store was given: no temporary files.
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/a/b")
        #expect(entries.sorted() == [PrivacyDataDirectory.lockFileName, "features.json"])
        try store.remove()
        #expect(try store.load() == nil)
        #expect(store.description == url.path(percentEncoded: false))
    }

    @Test func aCorruptFileFallsBackToTheConfigurationAndIsKeptUntilTheNextChange() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let url = directory.url.appending(path: "features.json")
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try Data([0x7B, 0x00, 0xFF, 0x22]).write(to: url)
        let gate = manager(.push, store: FileFeatureStore(url: url))
        #expect(gate.enabledFeatures == .push)
        #expect(gate.startupDiagnostics.count == 1)
        #expect(try Data(contentsOf: url) == Data([0x7B, 0x00, 0xFF, 0x22]))
        gate.enableFeatures(.analytics)
        #expect(gate.enabledFeatures == [.push, .analytics])
        // Only the decision is stored; push still follows the configuration.
        #expect(
            try FeatureStateRecord(decoding: Data(contentsOf: url))
                == FeatureStateRecord(enabledFeatures: .analytics, decidedFeatures: .analytics))
    }

    @Test func anUnreadableFileIsReportedAsALoadFailure() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        // A directory where the file should be: open succeeds on Linux but read fails with EISDIR.
        let url = directory.url.appending(path: "features.json")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let gate = manager(.push, store: FileFeatureStore(url: url))
        #expect(gate.enabledFeatures == .push)
        guard case .loadFailed(_, let error) = gate.startupDiagnostics.first else {
            Issue.record("expected loadFailed, got \(gate.startupDiagnostics)")
            return
        }
        #expect("\(error)".contains("features.json: cannot"))
    }

    /// A child saves in a loop and is SIGKILLed at varying moments; the file must always decode to a full record.
    @Test(arguments: ["manager", "blob"])
    func aWriterKilledAtAnyMomentLeavesTheOldOrTheNewState(mode: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let url = directory.url.appending(path: "state/features.json")
        let store = FileFeatureStore(url: url)
        let blobSize = 256 * 1024

        for round in 0..<12 {
            let child = try startFixture(mode: mode, path: url.path(percentEncoded: false), size: blobSize)
            usleep(UInt32(2_000 + round * 3_000))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            #expect(child.terminationReason == .uncaughtSignal)

            let record = try #require(try store.load())
            if mode == "blob" {
                #expect(record.count == blobSize)
                #expect(Set(record).count == 1)
            } else {
                let gate = manager([], store: store)
                #expect(gate.startupDiagnostics.isEmpty)
                // The writer's loop passes through these states; a round that starts from a stored `.all` (where
                // the previous child was killed) first saves `.all` minus push, since enabling changes nothing.
                let reachable: [Feature] = [[.push, .analytics], .analytics, .all, [], Feature.all.subtracting(.push)]
                #expect(reachable.contains(gate.enabledFeatures))
            }
        }
    }
}
#endif

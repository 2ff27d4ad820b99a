#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// The system watcher follows the data directory's path, not the directory it first found there: a directory renamed
/// away (or deleted) and replaced by a new one is watched at its path again (Linux: `IN_MOVE_SELF`/`IN_DELETE_SELF`).
@Suite struct ReplacedDataDirectoryTests {
    @Test(arguments: [true, false])
    func aDirectoryReplacedAtItsPathIsFollowed(renamed: Bool) throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let path = data.url.path(percentEncoded: false)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: [.analytics, .push]),
            store: FileFeatureStore(url: data.stateFile))
        let watch = try privacy.watchForChangesFromOtherProcesses(in: data)
        defer { watch.cancel() }
        let analytics = Feature.analytics.rawValue
        let push = Feature.push.rawValue

        // Another process changes the directory as it is: seen.
        #expect(try runFeatureStoreWriter(["set", path, "0", "\(push)"]) == 0)
        #expect(eventually { !privacy.isEnabled(.push) })

        if renamed {
            try FileManager.default.moveItem(atPath: path, toPath: path + ".old")
        } else {
            try FileManager.default.removeItem(atPath: path)
        }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        // Another process denies analytics in the new directory: seen, and so is every later change there.
        #expect(try runFeatureStoreWriter(["set", path, "0", "\(analytics)"]) == 0)
        #expect(eventually { !privacy.isEnabled(.analytics) }, "the change in the replacing directory was not seen")
        #expect(try runFeatureStoreWriter(["set", path, "\(analytics)", "0"]) == 0)
        #expect(eventually { privacy.isEnabled(.analytics) }, "a later change in the replacing directory was not seen")
    }
}
#endif

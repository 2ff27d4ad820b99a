#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The atomic write's directory creation reports the system's own error for the directory that failed.
@Suite struct AtomicFileTests {
    @Test func aDirectoryThatCannotBeCreatedIsReportedWithTheErrorOfThatDirectory() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        // A dangling symbolic link: mkdir sees it as existing, and the directory below it cannot be created.
        let link = directory.url.appending(path: "link")
        try FileManager.default.createSymbolicLink(
            atPath: link.path(percentEncoded: false), withDestinationPath: "/nonexistent-featuregate/target")
        let store = FileFeatureStore(url: link.appending(path: "state/features.json"))
        let error = #expect(throws: FileStoreError.self) { try store.save(Data("x".utf8)) }
        #expect(error?.path == directory.path + "/link/state")
        #expect(error?.operation == .createDirectory)
        #expect(error?.code == ENOENT)
    }

    @Test func createdDirectoriesAreOwnerOnly() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileFeatureStore(url: directory.url.appending(path: "a/b/features.json")).save(Data("x".utf8))
        for path in [directory.path, directory.path + "/a", directory.path + "/a/b"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700, "\(path)")
        }
    }

    @Test func aRelativePathIsCreatedUnderTheCurrentDirectory() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        // In a child: changing this process's current directory races every test that starts a process.
        let child = Process()
        child.executableURL = try builtProduct("feature-store-writer")
        child.arguments = ["relative", directory.path]
        try child.run()
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
        #expect(FileManager.default.contents(atPath: directory.path + "/rel/dir/features.json") == Data("x".utf8))
    }
}
#endif

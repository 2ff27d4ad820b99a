import FeatureGate
import Foundation
import NoopRuntime
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `FileStorage` in a directory another process has tampered with: nothing in it sends a read, a write or a delete
/// outside, nothing blocks, and a purge that leaves something says so.
@Suite struct HostileStorageTests {
    /// A data directory, a storage folder in it, and a directory outside with files that must survive.
    private struct Scene {
        let root = URL(filePath: NSTemporaryDirectory()).appending(path: "noop-hostile-\(UUID().uuidString)")
        var data: URL { root.appending(path: "data") }
        var folder: URL { data.appending(path: "queue") }
        var outside: String { root.appending(path: "outside").path(percentEncoded: false) }

        init() throws {
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
            for name in ["a.txt", "b.txt", "folder/c.txt"] {
                let url = URL(filePath: outside).appending(path: name)
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data("kept".utf8).write(to: url)
            }
        }

        var outsideTree: [String] { ((try? FileManager.default.subpathsOfDirectory(atPath: outside)) ?? []).sorted() }
        var untouched: [String] { ["a.txt", "b.txt", "folder", "folder/c.txt"] }

        func link(_ url: URL, to target: String) throws {
            try FileManager.default.createSymbolicLink(
                atPath: url.path(percentEncoded: false), withDestinationPath: target)
        }

        func exists(_ url: URL) -> Bool {
            var status = stat()
            return lstat(url.path(percentEncoded: false), &status) == 0
        }

        func cleanUp() { try? FileManager.default.removeItem(at: root) }
    }

    @Test(arguments: [false, true])
    func aStorageFolderThatIsALinkIsDeletedItselfNeverWhatItPointsTo(trailingSlash: Bool) throws {
        let scene = try Scene()
        defer { scene.cleanUp() }
        try scene.link(scene.folder, to: scene.outside)
        let directory = URL(filePath: scene.folder.path(percentEncoded: false) + (trailingSlash ? "/" : ""))
        let storage = FileStorage(directory: directory)
        #expect((#expect(throws: FileStoreError.self) { try storage.read("a.txt") })?.problem == .symbolicLink)
        #expect(throws: FileStoreError.self) { try storage.write(Data("x".utf8), to: "new.txt") }

        let removed = try storage.removeAll()

        #expect(removed == [scene.folder.path(percentEncoded: false)])
        #expect(!scene.exists(scene.folder))
        #expect(scene.outsideTree == scene.untouched)
    }

    @Test func aDataDirectoryThatIsALinkFailsThePurgeWithoutDeletingThrough() throws {
        let scene = try Scene()
        defer { scene.cleanUp() }
        try FileManager.default.removeItem(at: scene.data)
        try scene.link(scene.data, to: scene.outside)
        let storage = FileStorage(directory: scene.data.appending(path: "folder"))

        let error = #expect(throws: FileStorageError.self) { try storage.removeAll() }

        guard case .notAllRemoved(let removed, let failures)? = error else {
            Issue.record("expected notAllRemoved, got \(String(describing: error))")
            return
        }
        #expect(removed.isEmpty)
        #expect(failures.map(\.problem) == [.symbolicLink])
        #expect(scene.outsideTree == scene.untouched)
    }

    @Test func aLinkInsideTheFolderIsReplacedOnWriteRefusedOnReadAndDeletedItselfOnPurge() throws {
        let scene = try Scene()
        defer { scene.cleanUp() }
        let storage = FileStorage(directory: scene.folder)
        try storage.write(Data("mine".utf8), to: "mine.txt")
        try scene.link(scene.folder.appending(path: "a"), to: scene.outside + "/a.txt")
        try scene.link(scene.folder.appending(path: "b"), to: scene.outside + "/b.txt")
        try scene.link(scene.folder.appending(path: "sub"), to: scene.outside + "/folder")

        #expect((#expect(throws: FileStoreError.self) { try storage.read("a") })?.problem == .symbolicLink)
        #expect((#expect(throws: FileStoreError.self) { try storage.read("sub/c.txt") })?.problem == .symbolicLink)
        #expect(
            (#expect(throws: FileStoreError.self) { try storage.write(Data(), to: "sub/new") })?.problem
                == .symbolicLink)
        try storage.write(Data("new".utf8), to: "b")
        #expect(try storage.read("b") == Data("new".utf8))

        #expect(try storage.removeAll() == ["a", "b", "mine.txt", "sub"])
        #expect(!scene.exists(scene.folder))
        #expect(scene.outsideTree == scene.untouched)
        #expect(try String(contentsOfFile: scene.outside + "/b.txt", encoding: .utf8) == "kept")
    }

    @Test func aFIFOOrADanglingLinkInTheFolderNeitherBlocksNorStopsThePurge() throws {
        let scene = try Scene()
        defer { scene.cleanUp() }
        let storage = FileStorage(directory: scene.folder)
        try storage.write(Data("1".utf8), to: "deep/er/file")
        #expect(mkfifo(scene.folder.appending(path: "fifo").path(percentEncoded: false), 0o600) == 0)
        try scene.link(scene.folder.appending(path: "deep/dangling"), to: "/nonexistent-featuregate/x")

        let error = #expect(throws: FileStoreError.self) { try storage.read("fifo") }
        #expect(error?.problem == .notRegularFile(found: "a FIFO"))
        #expect(try storage.removeAll() == ["deep/dangling", "deep/er/file", "fifo"])
        #expect(!scene.exists(scene.folder))
    }

    @Test func aFileOverTheLimitIsRefusedUnread() throws {
        let scene = try Scene()
        defer { scene.cleanUp() }
        let storage = FileStorage(directory: scene.folder, maximumFileSize: 4)
        try storage.write(Data("12345".utf8), to: "big")
        #expect((#expect(throws: FileStoreError.self) { try storage.read("big") })?.problem == .tooLarge(limit: 4))
        try storage.write(Data("1234".utf8), to: "small")
        #expect(try storage.read("small") == Data("1234".utf8))
    }

    @Test func namesWithControlCharactersAreRefusedAndEveryLegalLengthWorks() throws {
        let scene = try Scene()
        defer { scene.cleanUp() }
        let storage = FileStorage(directory: scene.folder)
        for name in [
            "..\u{0}", "a\u{0}b", "line\nbreak", "esc\u{1B}[2J", "tab\t", "del\u{7F}",
            String(repeating: "x", count: 256),
        ] {
            #expect(throws: FileStorageError.invalidName(name)) { try storage.write(Data(), to: name) }
            #expect(throws: FileStorageError.invalidName(name)) { try storage.read(name) }
            #expect(throws: FileStorageError.invalidName(name)) { try storage.remove(name) }
        }
        #expect(!scene.exists(scene.folder))
        for name in [
            String(repeating: "x", count: 250), String(repeating: "é", count: 127),
            "ok/" + String(repeating: "y", count: 255),
        ] {
            try storage.write(Data("v".utf8), to: name)
            #expect(try storage.read(name) == Data("v".utf8))
        }
        #expect(try storage.removeAll().count == 3)
    }

    @Test func anInvalidNameIsPrintedEscaped() {
        let error = FileStorageError.invalidName("a\u{1B}[2J\nb")
        #expect(!error.description.contains("\u{1B}"))
        #expect(error.description.contains(#""a\u{1B}[2J\nb""#))
    }
}

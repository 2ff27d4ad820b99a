import FeatureGate
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The run-time defects found in the Apple-only code (issue 27), checked through the code Linux shares with it: how
/// a watched path is opened, the directory-created race, and how a socket planted at a file's name is classified.
@Suite struct ApplePlatformDefectsTests {
    /// Binds a Unix-domain socket at `path` (a socket file in the directory), or fails the test.
    private func plantSocket(at path: String) throws {
        #if canImport(Glibc)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        try #require(bytes.count < MemoryLayout.size(ofValue: address.sun_path))
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(result == 0)
    }

    /// Darwin refuses to open a socket with `EOPNOTSUPP`, Linux with `ENXIO`: either way the planted socket is
    /// hostile content (not a temporary refusal the next launch retries), named as a socket.
    @Test func aSocketAtAFilesNameIsHostileContentWhicheverErrnoTheSystemGives() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try plantSocket(at: directory.url.appending(path: "state").path(percentEncoded: false))
        let descriptor = open(directory.path, O_RDONLY | O_DIRECTORY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        for code in [ENXIO, EOPNOTSUPP] {
            let error = AtomicFile.error(
                path: directory.path + "/state", operation: .open, errno: code, at: "state", in: descriptor)
            #expect(error.problem == .notRegularFile(found: "a socket"), "errno \(code)")
            #expect(error.isHostileContent, "errno \(code)")
        }
        // And through the store: reading the socket fails as hostile content on this platform.
        #expect {
            try FileFeatureStore(url: directory.url.appending(path: "state")).load()
        } throws: { error in
            (error as? FileStoreError)?.isHostileContent == true
        }
    }

    /// A FIFO at a watched name neither blocks the open (the watcher arms inside `queue.sync`, so a blocking open
    /// would hang the launch) nor is a symbolic link ever followed.
    @Test func aWatchedPathOpensAFIFOWithoutBlockingAndNeverFollowsALink() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let fifo = directory.url.appending(path: "fifo").path(percentEncoded: false)
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(WatchedPath.flags & O_NONBLOCK != 0)
        #expect(WatchedPath.flags & O_NOFOLLOW != 0)
        #expect(WatchedPath.flags & O_CLOEXEC != 0)
        // Without O_NONBLOCK this open would wait for a writer forever.
        let descriptor = WatchedPath.open(fifo)
        #expect(descriptor >= 0)
        if descriptor >= 0 { close(descriptor) }

        let link = directory.url.appending(path: "link").path(percentEncoded: false)
        #expect(symlink(directory.path, link) == 0)
        #expect(WatchedPath.open(link) == -1)
        #expect(errno == ELOOP)
    }

    /// The whole watcher with a FIFO planted at the ledger's name: starting the watch returns, and changes still
    /// arrive.
    @Test func aFIFOAtTheLedgersNameDoesNotHangTheWatcher() throws {
        let root = TemporaryDirectory()
        defer { root.cleanUp() }
        let data = PrivacyDataDirectory(url: root.url.appending(path: "data"))
        try FileManager.default.createDirectory(at: data.url, withIntermediateDirectories: true)
        #expect(mkfifo(data.consentLedgerFile.path(percentEncoded: false), 0o600) == 0)
        let seen = LockedValue<DataDirectoryChange>([])
        let token = try SystemDataDirectoryWatcher().watch(data) { change in seen.withLock { $0.formUnion(change) } }
        defer { token.cancel() }
        try FileFeatureStore(url: data.stateFile).save(FeatureStateRecord(enabledFeatures: .push).encoded())
        #expect(eventually { seen.withLock { $0.contains(.state) } })
    }

    /// The directory created while the watch starts (between the failed open of the directory and the watch on
    /// its parent, on some of the rounds): every round still sees a later write in it.
    @Test func aDirectoryCreatedWhileTheWatchStartsIsStillWatched() throws {
        let root = TemporaryDirectory()
        defer { root.cleanUp() }
        try FileManager.default.createDirectory(at: root.url, withIntermediateDirectories: true)
        for round in 0..<100 {
            let data = PrivacyDataDirectory(url: root.url.appending(path: "data-\(round)"))
            let seen = LockedValue<DataDirectoryChange>([])
            let creator = Thread {
                try? FileManager.default.createDirectory(at: data.url, withIntermediateDirectories: false)
            }
            creator.start()
            let token = try SystemDataDirectoryWatcher().watch(data) { change in
                seen.withLock { $0.formUnion(change) }
            }
            defer { token.cancel() }
            #expect(eventually { FileManager.default.fileExists(atPath: data.url.path(percentEncoded: false)) })
            try FileFeatureStore(url: data.stateFile).save(FeatureStateRecord(enabledFeatures: .push).encoded())
            #expect(eventually { seen.withLock { $0.contains(.state) } }, "round \(round)")
        }
    }
}

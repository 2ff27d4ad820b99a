#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import NoopRuntime
import PackageTestSupport
import ProcessTestSupport
import Testing

/// Subsystem files while another process holds the data directory's lock, stopped: their writes and purges wait at
/// most the bound, revoke-all returns with purges pending, and a write that takes the lock after another process's
/// "no" is refused (issue 36).
@Suite struct StoppedHolderStorageTests {
    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])

    static func directory() -> URL {
        URL(filePath: NSTemporaryDirectory()).appending(path: "noop-storage-held-\(UUID().uuidString)")
    }

    @Test func revokeAllReturnsWhileAStoppedProcessHoldsTheLockWithSubsystemFilesToPurge() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = PrivacyDataDirectory(url: directory.appending(path: "data"))
        let (privacy, consent) = launchGateAndConsent(on: data, policy: Self.policy)
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        let runtime = SubsystemRuntime(privacy: privacy)
        // More subsystems than the pool has threads: each purge that waited without bound held one.
        var storages: [GatedStorage] = []
        for index in 0..<4 {
            let storage = GatedStorage(
                FileStorage(directory: data.url.appending(path: "sub\(index)")), features: .analytics, privacy: privacy)
            try storage.write(Data("kept".utf8), to: "file")
            storages.append(storage)
            runtime.register(StorageSubsystem("sub\(index)", storage: storage))
        }
        runtime.start()
        let identifier = AnonymousIdentifier(privacy: privacy, url: data.anonymousIdentifierFile)
        let revocation = ConsentRevocation(
            consent: consent, runtime: runtime, identifier: identifier, deadline: .milliseconds(300))
        let holder = try StoppedLockHolder(directory: data.url)
        defer { holder.release() }

        let report = await revokeAllReturning(revocation)
        #expect(report != nil, "revokeAll waited for the stopped process")
        #expect(!privacy.isAnyEnabled())
        // Left for the next start, and recorded so (durably, though the lock was busy).
        #expect(privacy.pendingRevocation?.areSubsystemsPurged == false)

        holder.release()
        let finished = await revocation.finishPendingRevocation()
        #expect(finished != nil)
        // A purge may give up behind this process's own background writes (bounded too) on a busy machine: the
        // pending record keeps it owed, and the next call finishes it, as the next start would.
        for _ in 0..<50 where privacy.pendingRevocation != nil {
            try await Task.sleep(for: .milliseconds(20))
            _ = await revocation.finishPendingRevocation()
        }
        #expect(privacy.pendingRevocation == nil)
        for index in 0..<4 {
            let folder = data.url.appending(path: "sub\(index)").path(percentEncoded: false)
            #expect(!FileManager.default.fileExists(atPath: folder), "sub\(index) outlived revoke-all")
        }
        #expect(storages.allSatisfy { !$0.isOpen })
    }

    @Test func aWriteThatTakesTheLockAfterAnotherProcesssNoIsRefused() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = PrivacyDataDirectory(url: directory.appending(path: "data"))
        let (privacy, consent) = launchGateAndConsent(on: data, policy: Self.policy)
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        privacy.enableFeatures(.messageCenter)
        let storage = GatedStorage(
            FileStorage(directory: data.url.appending(path: "sub")), features: .analytics, privacy: privacy)
        let holder = try StoppedLockHolder(directory: data.url)
        defer { holder.release() }

        // Bounded: the write gives up instead of waiting for the stopped process.
        let attempt = LockedValue<Result<Void, GatedIOError>?>(nil)
        Thread.detachNewThread {
            let result = Result { () throws(GatedIOError) in try storage.write(Data("early".utf8), to: "file") }
            attempt.withLock { $0 = result }
        }
        #expect(await eventually(turns: 2_000) { attempt.withLock { $0 } != nil }, "the write waited without bound")

        // Another process denies analytics and is killed once the call returned; this process has not heard of it.
        let output = Pipe()
        let child = try startFeatureStoreWriter(
            ["takeaway", data.url.path(percentEncoded: false), "consent"], output: output)
        let said = output.fileHandleForReading.readData(ofLength: 9)
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        #expect(String(decoding: said, as: UTF8.self) == "returned\n")
        #expect(privacy.isEnabled(.analytics))

        holder.release()
        var refused = false
        do {
            try storage.write(Data("late".utf8), to: "file")
        } catch {
            if case .gateClosed = error { refused = true }
        }
        #expect(refused, "a write landed after another process's no")
        let file = data.url.appending(path: "sub/file").path(percentEncoded: false)
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(!privacy.isEnabled(.analytics))
    }
}
#endif

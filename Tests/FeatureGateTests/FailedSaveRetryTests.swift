import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// A "no" whose save failed (the disk full, or read-only) is retried in the background while the process lives, and
/// saved once the fault clears; the diagnostic says when it landed.
@Suite struct FailedSaveRetryTests {
    /// The system's file system, whose writes fail with `ENOSPC` while `isFull`.
    final class FillingDisk: Sendable {
        let isFull = LockedValue(true)
        var fileSystem: FileSystem {
            let system = FileSystem.system
            return FileSystem(
                open: system.open, openat: system.openat, close: system.close, dup: system.dup, read: system.read,
                pread: system.pread,
                write: { [isFull] fd, buffer, count in
                    guard !isFull.withLock({ $0 }) else {
                        errno = ENOSPC
                        return -1
                    }
                    return system.write(fd, buffer, count)
                },
                truncate: system.truncate, sync: system.sync, renameat: system.renameat, unlinkat: system.unlinkat,
                mkdir: system.mkdir, mkdirat: system.mkdirat, fstat: system.fstat, fstatat: system.fstatat,
                lstat: system.lstat, fchmodat: system.fchmodat, flock: system.flock, entries: system.entries)
        }
    }

    enum TakeAway: String, CaseIterable {
        case disable, revokeAll
    }

    @Test(arguments: TakeAway.allCases)
    func aNoWhoseSaveFailedIsSavedOnceTheDiskHasSpaceAgain(kind: TakeAway) async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let diagnostics = Collector<PrivacyManagerDiagnostic>()
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
            diagnosticHandler: { diagnostics.append($0) })
        privacy.enableFeatures([.push, .analytics])
        let disk = FillingDisk()
        FileSystem.$current.withValue(disk.fileSystem) {
            switch kind {
            case .disable: privacy.disableFeatures(.push)
            case .revokeAll:
                _ = privacy.beginRevocation(
                    PendingRevocation(anonymousIdentifier: nil, isErasureOwed: false), refusing: [])
            }
        }
        #expect(diagnostics.all.contains { if case .saveFailed = $0 { true } else { false } }, "\(diagnostics.all)")
        try await Task.sleep(for: .milliseconds(300))  // A few retries on the full disk.
        disk.isFull.withLock { $0 = false }
        // Retries back off (0.1 s, doubling): under a loaded full run one can come late.
        let landed = await eventually(turns: 6_000) {
            diagnostics.all.contains { if case .failedSaveLanded = $0 { true } else { false } }
        }
        #expect(landed, "\(diagnostics.all)")
        let next = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile))
        #expect(!next.isEnabled(.push))
        #expect(kind == .revokeAll ? !next.isEnabled(.analytics) : next.isEnabled(.analytics))
    }
}

#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// A payload that arrives while another process holds the data directory's lock (stopped): it applies at once, the
/// call does not wait for the holder, and the payload is kept once the lock is free, so a relaunch finds it.
@Suite struct RemoteLayerLockTests {
    @Test func aPayloadTheLockKeptFromBeingSavedIsKeptOnceTheLockIsFree() async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let diagnostics = DiagnosticLog()
        let gate = directory.launch(enabled: [.push, .analytics], diagnostics: diagnostics)
        try gate.applyRemotePayload(Payloads.disabling("push"))
        let holder = try StoppedLockHolder(directory: directory.url)
        defer { holder.release() }

        let applied = LockedValue(false)
        Thread.detachNewThread {
            _ = try? gate.applyRemotePayload(Payloads.disabling("analytics"))
            applied.withLock { $0 = true }
        }
        #expect(await eventually(turns: 2_000) { applied.withLock { $0 } }, "the payload waited for the holder")
        #expect(gate.enabledFeatures == [.push])
        #expect(diagnostics.all.contains { if case .remoteLayerKeptLater = $0 { true } else { false } })
        // Not kept yet: the file still holds the old payload.
        #expect(directory.launch(enabled: [.push, .analytics]).enabledFeatures == [.analytics])

        holder.release()
        let kept = await eventually(turns: 2_000) {
            directory.launch(enabled: [.push, .analytics]).enabledFeatures == [.push]
        }
        #expect(kept, "the payload was not kept once the lock was free")
        #expect(gate.keptRemoteLayer?.payload == Payloads.disabling("analytics"))
    }

    @Test func aPayloadNotKeptYetIsNotWrittenOnceEveryFeatureIsOff() async throws {
        let directory = RemoteTestDirectory()
        defer { directory.cleanUp() }
        let gate = directory.launch(enabled: [.push, .analytics])
        try gate.applyRemotePayload(Payloads.disabling("push"))
        let file = directory.data.remoteLayerFile.path(percentEncoded: false)
        let kept = try #require(FileManager.default.contents(atPath: file))
        let holder = try StoppedLockHolder(directory: directory.url)
        defer { holder.release() }
        let applied = LockedValue(false)
        Thread.detachNewThread {
            _ = try? gate.applyRemotePayload(Payloads.disabling("analytics"))
            gate.disableFeatures(.all)
            applied.withLock { $0 = true }
        }
        #expect(await eventually(turns: 2_000) { applied.withLock { $0 } })

        holder.release()
        // The gate's own held write lands; the payload, decided while something was on, is not written after.
        #expect(await eventually(turns: 2_000) { !gate.isHoldingWrites })
        let written = await eventually(turns: 200) { FileManager.default.contents(atPath: file) != kept }
        #expect(!written, "a fully disabled gate wrote the remote layer")
    }
}
#endif

#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// A payload that arrives while another process holds the data directory's lock (stopped): it applies at once, the
/// call does not wait for the holder, and it is on disk before the call returns (an intent, read by every start), so
/// a relaunch finds it even after a kill; once the lock is free its next holder writes it into the file.
@Suite struct RemoteLayerLockTests {
    /// The intents folder of `directory`.
    static func intentsFolderExists(_ directory: RemoteTestDirectory) -> Bool {
        FileManager.default.fileExists(atPath: directory.url.appending(path: ".featuregate-intents").path())
    }

    /// The bytes of `directory`'s remote layer file.
    static func kept(_ directory: RemoteTestDirectory) -> Data? {
        FileManager.default.contents(atPath: directory.data.remoteLayerFile.path(percentEncoded: false))
    }

    /// A gate on a new directory, push and analytics enabled, whose kept payload disables push; and the kept file's
    /// bytes.
    static func prepared(
        diagnostics: DiagnosticLog? = nil
    ) throws -> (directory: RemoteTestDirectory, gate: PrivacyManager, kept: Data) {
        let directory = RemoteTestDirectory()
        let gate = directory.launch(enabled: [.push, .analytics], diagnostics: diagnostics)
        try gate.applyRemotePayload(Payloads.disabling("push"))
        return (directory, gate, try #require(Self.kept(directory)))
    }

    /// Runs `body` on a thread of its own (it may wait on the lock: no thread of the cooperative pool is held) and
    /// waits, in turns, until it returns; whether it did.
    static func returns(_ body: @escaping @Sendable () -> Void) async -> Bool {
        let returned = LockedValue(false)
        Thread.detachNewThread {
            body()
            returned.withLock { $0 = true }
        }
        return await eventually(turns: 2_000) { returned.withLock { $0 } }
    }

    @Test func aPayloadTheLockKeptFromBeingSavedIsInForceAtTheNextLaunchAndKeptOnceTheLockIsFree() async throws {
        let diagnostics = DiagnosticLog()
        let (directory, gate, before) = try Self.prepared(diagnostics: diagnostics)
        defer { directory.cleanUp() }
        let holder = try StoppedLockHolder(directory: directory.url)
        defer { holder.release() }

        let returned = await Self.returns { _ = try? gate.applyRemotePayload(Payloads.disabling("analytics")) }
        #expect(returned, "the payload waited for the holder")
        #expect(gate.enabledFeatures == [.push])
        #expect(diagnostics.all.contains { if case .remoteLayerKeptLater = $0 { true } else { false } })
        // Not in the file yet (the holder has the lock), but on disk: a relaunch reads it over the file.
        #expect(Self.kept(directory) == before)
        let relaunched = directory.launch(enabled: [.push, .analytics])
        #expect(relaunched.enabledFeatures == [.push])
        #expect(relaunched.keptRemoteLayer?.payload == Payloads.disabling("analytics"))

        holder.release()
        let written = await eventually(turns: 2_000) {
            Self.kept(directory) != before && !Self.intentsFolderExists(directory)
        }
        #expect(written, "the payload was not written into the file once the lock was free")
        #expect(directory.launch(enabled: [.push, .analytics]).enabledFeatures == [.push])
        #expect(gate.keptRemoteLayer?.payload == Payloads.disabling("analytics"))
    }

    @Test func aPayloadAppliedWhileAFeatureWasOnIsKeptAfterEveryFeatureGoesOff() async throws {
        let (directory, gate, before) = try Self.prepared()
        defer { directory.cleanUp() }
        let holder = try StoppedLockHolder(directory: directory.url)
        defer { holder.release() }
        let returned = await Self.returns {
            _ = try? gate.applyRemotePayload(Payloads.disabling("analytics"))
            gate.disableFeatures(.all)
        }
        #expect(returned)
        // Once everything is off, a new payload is refused: nothing is written for it.
        #expect(throws: RemoteLayerUpdateError.self) { try gate.applyRemotePayload(Payloads.disabling("push")) }

        holder.release()
        // The payload whose call returned while analytics was on was acknowledged: finishing its write is part of
        // that call, as the disable's own held write is.
        #expect(await eventually(turns: 2_000) { !gate.isHoldingWrites && !Self.intentsFolderExists(directory) })
        #expect(Self.kept(directory) != before)
        #expect(directory.launch().keptRemoteLayer?.payload == Payloads.disabling("analytics"))
    }

    /// Rounds: each starts two processes and waits for a bound of 100 ms.
    static let rounds = 4

    @Test func aKilledProcessesAcknowledgedPayloadIsInForceInTheNextProcess() async throws {
        var lost = 0
        for _ in 0..<Self.rounds {
            let (directory, _, before) = try Self.prepared()
            defer { directory.cleanUp() }
            let holder = try StoppedLockHolder(directory: directory.url)
            defer { holder.release() }

            let output = Pipe()
            let child = try startFeatureStoreWriter(
                ["takeaway", directory.url.path(percentEncoded: false), "killswitch"], output: output)
            let said = LockedValue("")
            Thread.detachNewThread {
                let line = output.fileHandleForReading.readData(ofLength: 9)
                said.withLock { $0 = String(decoding: line, as: UTF8.self) }
            }
            let returned = await eventually(turns: 4_000) { said.withLock { $0 } == "returned\n" }
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            #expect(returned, "the payload's call did not return while another process held the lock")
            guard returned else { continue }

            // With the lock still held, and again once it is free and folded into the file.
            #expect(Self.kept(directory) == before, "the payload was written under another process's lock")
            if directory.launch(enabled: [.push, .analytics]).enabledFeatures != [.push] { lost += 1 }
            holder.release()
            let diagnostics = DiagnosticLog()
            let next = directory.launch(enabled: [.push, .analytics], diagnostics: diagnostics)
            #expect(next.enabledFeatures == [.push])
            #expect(diagnostics.all.isEmpty, "\(diagnostics.all)")
            // That start folds it in the background.
            #expect(await eventually(turns: 2_000) { !Self.intentsFolderExists(directory) }, "not folded")
            #expect(Self.kept(directory) != before)
            #expect(directory.launch(enabled: [.push, .analytics]).enabledFeatures == [.push])
        }
        #expect(lost == 0, "\(lost) of \(Self.rounds) acknowledged payloads lost")
    }
}
#endif

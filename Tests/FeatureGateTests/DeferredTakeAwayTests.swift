import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// A take-away on a file store is an unflushed intent on the caller's thread and one flush pass off it (issue 47,
/// item 1): what follows it in the same burst lands in order, a change that changes nothing writes nothing, and a
/// take-away behind another process's lock is no held write.
@Suite struct DeferredTakeAwayTests {
    /// A gate on a data directory of `directory` where messageCenter and push are enabled and saved.
    static func prepared(
        _ directory: TemporaryDirectory, diagnostics: Collector<PrivacyManagerDiagnostic>? = nil
    ) async -> (PrivacyDataDirectory, PrivacyManager) {
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        var handler: (@Sendable (PrivacyManagerDiagnostic) -> Void)?
        if let diagnostics { handler = { diagnostics.append($0) } }
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
            diagnosticHandler: handler)
        privacy.enableFeatures([.messageCenter, .push])
        #expect(await privacy.synchronize())
        return (data, privacy)
    }

    /// What a fresh start on `data` shows.
    static func restarted(on data: PrivacyDataDirectory) -> Feature {
        PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile)
        ).enabledFeatures
    }

    /// The record the gate state file holds.
    static func stored(in data: PrivacyDataDirectory) throws -> FeatureStateRecord {
        try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
    }

    /// An enable right after a disable, before the disable's flush: the intent is folded first, the enable saved over
    /// it, so the store ends as the last call left the gate, enabled.
    @Test func anEnableRightAfterADisableEndsEnabled() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let (data, privacy) = await Self.prepared(directory)
        privacy.disableFeatures(.messageCenter)
        privacy.enableFeatures(.messageCenter)
        // The enable is saved on its caller's thread, over the disable's folded intent: a start now finds it.
        #expect(Self.restarted(on: data).contains(.messageCenter))
        for _ in 0..<50 {
            privacy.disableFeatures(.messageCenter)
            privacy.enableFeatures(.messageCenter)
        }
        #expect(Self.restarted(on: data).contains(.messageCenter))
        #expect(await privacy.synchronize())
        #expect(privacy.isEnabled(.messageCenter))
        #expect(try Self.stored(in: data).enabledFeatures.contains(.messageCenter))
        #expect(Self.restarted(on: data).contains(.messageCenter))
        #expect(IntentJournal.pending(in: data.url.path(percentEncoded: false)).isEmpty)
    }

    /// A disable right after an enable ends disabled, in memory, in the store and for a fresh start.
    @Test func aDisableRightAfterAnEnableEndsDisabled() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let (data, privacy) = await Self.prepared(directory)
        for _ in 0..<50 {
            privacy.enableFeatures(.messageCenter)
            privacy.disableFeatures(.messageCenter)
        }
        // A kill now: the intent is in the operating system's hands, and a start reads it.
        #expect(!Self.restarted(on: data).contains(.messageCenter))
        #expect(await privacy.synchronize())
        #expect(!privacy.isEnabled(.messageCenter))
        #expect(!(try Self.stored(in: data).enabledFeatures.contains(.messageCenter)))
        #expect(!Self.restarted(on: data).contains(.messageCenter))
    }

    /// Disabled means silent: with every feature off on a fresh directory, a disable and a synchronize create no
    /// file, not even the directory.
    @Test func aDisableThatChangesNothingWritesNothing() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile))
        privacy.disableFeatures(.all)
        privacy.updateFeatures(disable: [.analytics, .push])
        #expect(await privacy.synchronize())
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    /// Behind another process's lock a disable is no held write: no diagnostic, writes not held, the "no" in an
    /// intent a start reads at once; the flusher folds it once the lock is free.
    @Test func aDisableBehindABusyLockIsNoHeldWrite() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let diagnostics = Collector<PrivacyManagerDiagnostic>()
        let (data, privacy) = await Self.prepared(directory, diagnostics: diagnostics)
        let release = IntentFolderTests.holdLock(of: data)
        privacy.disableFeatures(.messageCenter)
        #expect(!privacy.isEnabled(.messageCenter) && !privacy.isHoldingWrites)
        #expect(!Self.restarted(on: data).contains(.messageCenter))
        #expect(diagnostics.all.isEmpty, "\(diagnostics.all)")
        release()
        #expect(await privacy.synchronize())
        #expect(!(try Self.stored(in: data).enabledFeatures.contains(.messageCenter)))
        #expect(IntentJournal.pending(in: data.url.path(percentEncoded: false)).isEmpty)
        #expect(diagnostics.all.isEmpty, "\(diagnostics.all)")
    }

    /// An enable behind another process's lock, after a disable of the same flag still pending: the enable is held,
    /// and the held write is merged over the store once the pending disable is folded into it. The enable is the last
    /// call, so it wins, in memory, in the store and for a fresh start (it was lost while the held change was measured
    /// from what was saved, not from what the store holds once the pending disable is folded).
    @Test func anEnableHeldBehindABusyLockAfterAPendingDisableIsKept() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let (data, privacy) = await Self.prepared(directory)
        let release = IntentFolderTests.holdLock(of: data)
        privacy.disableFeatures(.messageCenter)
        privacy.enableFeatures(.messageCenter)
        #expect(privacy.isEnabled(.messageCenter))
        release()
        #expect(await privacy.synchronize())
        #expect(eventually { !privacy.isHoldingWrites })
        #expect(privacy.isEnabled(.messageCenter))
        #expect(try Self.stored(in: data).enabledFeatures.contains(.messageCenter))
        #expect(Self.restarted(on: data).contains(.messageCenter))
    }

    /// Many threads disabling and enabling flags at once, thousands of calls: the store ends as memory does, and
    /// every intent is folded.
    @Test func concurrentTakeAwaysAndEnablesEndAsMemoryDoes() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let (data, privacy) = await Self.prepared(directory)
        let flags: [Feature] = [.messageCenter, .push, .analytics, .contacts]
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var generator = SeededGenerator(seed: UInt64(worker + 1))
                    for _ in 0..<250 {
                        let flag = flags[Int(generator.next() % UInt64(flags.count))]
                        if generator.next() % 3 == 0 {
                            privacy.enableFeatures(flag)
                        } else {
                            privacy.disableFeatures(flag)
                        }
                    }
                }
            }
        }
        #expect(await privacy.synchronize())
        let memory = privacy.enabledFeatures
        #expect(try Self.stored(in: data).enabledFeatures == memory)
        #expect(Self.restarted(on: data) == memory)
        #expect(IntentJournal.pending(in: data.url.path(percentEncoded: false)).isEmpty)
    }
}

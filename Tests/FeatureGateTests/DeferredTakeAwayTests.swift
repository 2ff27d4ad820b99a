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

    /// A reload landing while an enable waits for the lock, after a disable of the same flag that another process's
    /// holder already folded into the record: the record says off, memory on, and what was saved on (the disable
    /// pending). The reload keeps the enable, the last call, and the store ends with it. The enable's wait is paused
    /// (its `dup` of the lock's descriptor, made without the manager's lock) while the reload runs, so the order is
    /// fixed, not a matter of timing.
    @Test func aReloadWhileAnEnableWaitsForTheLockKeepsTheEnable() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let (data, privacy) = await Self.prepared(directory)
        let anchor = data.url.path(percentEncoded: false)
        let release = IntentFolderTests.holdLock(of: data)
        privacy.disableFeatures(.messageCenter)
        // Another process's holder: it folds the pending disable into the record and deletes the intent.
        var folded = try Self.stored(in: data)
        folded.enabledFeatures.subtract(.messageCenter)
        folded.decidedFeatures.formUnion(.messageCenter)
        try folded.encoded().write(to: data.stateFile, options: .atomic)
        try FileManager.default.removeItem(atPath: anchor + "/" + IntentJournal.directoryName)
        #expect(!(try Self.stored(in: data).enabledFeatures.contains(.messageCenter)))
        let waiting = DispatchSemaphore(value: 0)
        let resume = DispatchSemaphore(value: 0)
        let system = FileSystem.system
        let paused = LockedValue(false)
        let pausing = FileSystem(
            open: system.open, openat: system.openat, close: system.close,
            dup: { fd in
                if !paused.withLock({ paused -> Bool in
                    defer { paused = true }
                    return paused
                }) {
                    waiting.signal()
                    resume.wait()
                }
                return system.dup(fd)
            },
            read: system.read, pread: system.pread, write: system.write, truncate: system.truncate,
            sync: system.sync, renameat: system.renameat, unlinkat: system.unlinkat, mkdir: system.mkdir,
            mkdirat: system.mkdirat, fstat: system.fstat, fstatat: system.fstatat, lstat: system.lstat,
            fchmodat: system.fchmodat, flock: system.flock, entries: system.entries)
        let enabled = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            FileSystem.$current.withValue(pausing) { privacy.enableFeatures(.messageCenter) }
            enabled.signal()
        }
        waiting.wait()
        #expect(privacy.isEnabled(.messageCenter))
        privacy.reloadStoredState()
        #expect(privacy.isEnabled(.messageCenter), "the reload took the folded disable over the later enable")
        resume.signal()
        enabled.wait()
        release()
        #expect(await privacy.synchronize())
        #expect(eventually { !privacy.isHoldingWrites })
        #expect(privacy.isEnabled(.messageCenter))
        #expect(try Self.stored(in: data).enabledFeatures.contains(.messageCenter))
        #expect(Self.restarted(on: data).contains(.messageCenter))
    }

    /// A reload landing while the flusher's pass is between its write and its bookkeeping (paused at its directory's
    /// flush) takes another process's enable of push from the record the pass wrote. That process then disables push
    /// again; this process's next save must not read the push it took by the reload as a change of its own and switch
    /// push back on.
    @Test func aReloadDuringAFlushPassIsNotTakenForThisProcesssChange() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let (data, privacy) = await Self.prepared(directory)
        privacy.disableFeatures(.push)
        #expect(await privacy.synchronize())
        // Another process enables push.
        func otherProcess(sets push: Bool) throws {
            var record = try Self.stored(in: data)
            if push { record.enabledFeatures.formUnion(.push) } else { record.enabledFeatures.subtract(.push) }
            try record.encoded().write(to: data.stateFile, options: .atomic)
        }
        try otherProcess(sets: true)
        let flushing = DispatchSemaphore(value: 0)
        let resume = DispatchSemaphore(value: 0)
        let system = FileSystem.system
        let paused = LockedValue(false)
        let callerMark = "DeferredTakeAwayTests.caller"
        let pausing = FileSystem(
            open: system.open, openat: system.openat, close: system.close, dup: system.dup, read: system.read,
            pread: system.pread, write: system.write, truncate: system.truncate,
            sync: { fd, durability in
                var status = stat()
                // The flusher's, not the caller's thread (which flushes the intents' folder it creates).
                let isDirectory =
                    system.fstat(fd, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
                    && Thread.current.threadDictionary[callerMark] == nil
                let first = paused.withLock { paused -> Bool in
                    defer { paused = paused || isDirectory }
                    return isDirectory && !paused
                }
                if first {
                    flushing.signal()
                    resume.wait()
                }
                return system.sync(fd, durability)
            },
            renameat: system.renameat, unlinkat: system.unlinkat, mkdir: system.mkdir, mkdirat: system.mkdirat,
            fstat: system.fstat, fstatat: system.fstatat, lstat: system.lstat, fchmodat: system.fchmodat,
            flock: system.flock, entries: system.entries)
        FileSystem.$current.withValue(pausing) {
            Thread.current.threadDictionary[callerMark] = true
            defer { Thread.current.threadDictionary.removeObject(forKey: callerMark) }
            privacy.disableFeatures(.messageCenter)
        }
        flushing.wait()
        privacy.reloadStoredState()
        #expect(privacy.isEnabled(.push))
        // The other process disables push again (as soon as the pass lets the lock go; written now, for a fixed order).
        try otherProcess(sets: false)
        resume.signal()
        #expect(await privacy.synchronize())
        privacy.enableFeatures(.analytics)
        #expect(!(try Self.stored(in: data).enabledFeatures.contains(.push)), "push switched back on")
        #expect(!Self.restarted(on: data).contains(.push))
        #expect(!(try Self.stored(in: data).enabledFeatures.contains(.messageCenter)))
    }

    /// Another gate watching the directory sees a pending disable as soon as it is written, while a third holder
    /// keeps the lock and nothing folds it, the first (which creates the intents' folder) and the next (into the
    /// folder that stands): the watch follows the folder, and a reload reads it as a start does. Before, it saw the
    /// disables only once the lock's next holder folded them.
    @Test func aWatchingGateSeesAPendingDisableBeforeItIsFolded() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let (data, privacy) = await Self.prepared(directory)
        let other = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile))
        let watching = try other.watchForChangesFromOtherProcesses(in: data)
        defer { watching.cancel() }
        #expect(other.isEnabled(.messageCenter))
        let release = IntentFolderTests.holdLock(of: data)
        privacy.disableFeatures(.messageCenter)
        #expect(eventually { !other.isEnabled(.messageCenter) }, "the watching gate kept the pending disable's flag on")
        #expect(other.isEnabled(.push))
        // A second one while the folder stands: the folder itself is watched.
        privacy.disableFeatures(.push)
        #expect(eventually { !other.isEnabled(.push) }, "the watching gate kept the second pending disable's flag on")
        // Its own change meanwhile keeps the pending disable (the change is measured from the record with it).
        other.enableFeatures(.analytics)
        release()
        #expect(await privacy.synchronize())
        #expect(eventually { other.isEnabled(.analytics) && !other.isHoldingWrites })
        #expect(!other.isEnabled(.messageCenter) && !other.isEnabled(.push))
        #expect(try Self.stored(in: data).enabledFeatures == [.analytics])
        #expect(Self.restarted(on: data) == [.analytics])
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

import FeatureGate
import Foundation
import NoopRuntime
import Testing

@Suite struct GatedIOTests {
    @Test func aClosedGatedStorageRefusesEveryCallWithoutTouchingTheInnerStore() throws {
        let privacy = gate(.push)  // open for push, closed for analytics
        let ledger = IOCounter()
        let storage = GatedStorage(ExplodingStorage(), features: .analytics, privacy: privacy, counter: ledger)

        #expect(throws: GatedIOError.self) { try storage.read("queue") }
        #expect(throws: GatedIOError.self) { try storage.write(Data([1]), to: "queue") }
        #expect(throws: GatedIOError.self) { try storage.remove("queue") }
        do {
            try storage.write(Data(), to: "queue")
            Issue.record("write went through a closed gate")
        } catch {
            guard case .gateClosed(let features) = error else { return #expect(Bool(false), "\(error)") }
            #expect(features == .analytics)
            #expect(error.isRefusal)
        }
        #expect(ledger.counts(for: .analytics).storageRefused == 4)
        #expect(ledger.counts(for: .analytics).storageAllowed == 0)
        #expect(ledger.counts(for: .push).isZero)
    }

    @Test func aClosedGatedTransportRefusesWithoutTouchingTheInnerClient() async {
        let ledger = IOCounter()
        let transport = GatedTransport(ExplodingTransport(), features: .push, privacy: gate(), counter: ledger)
        for _ in 0..<10 {
            await #expect(throws: GatedIOError.self) {
                try await transport.send(TransportRequest(method: "POST", path: "/register"))
            }
        }
        #expect(throws: GatedIOError.self) { try transport.admit() }
        #expect(ledger.counts(for: .push).transportRefused == 11)
        #expect(ledger.totals.isSilent)
    }

    @Test func anOpenGateReachesTheInnerResourcesAndCountsThem() async throws {
        let privacy = gate(.analytics)
        let ledger = IOCounter()
        let memory = MemoryStorage()
        let recording = RecordingTransport()
        let storage = GatedStorage(memory, features: .analytics, privacy: privacy, counter: ledger)
        let transport = GatedTransport(recording, features: .analytics, privacy: privacy, counter: ledger)

        try storage.write(Data("x".utf8), to: "a")
        #expect(try storage.read("a") == Data("x".utf8))
        #expect(try storage.remove("a"))
        let response = try await transport.send(TransportRequest(method: "POST", path: "/events"))
        #expect(response.isSuccess)

        #expect(memory.calls.all == ["write a", "read a", "remove a"])
        #expect(recording.paths() == ["/events"])
        let counts = ledger.counts(for: .analytics)
        #expect(counts.storageAllowed == 3)
        #expect(counts.transportAllowed == 1)
        #expect(counts.storageRefused == 0 && counts.transportRefused == 0)
    }

    @Test func theGateIsCheckedOnEveryCall() async throws {
        let privacy = gate(.analytics)
        let memory = MemoryStorage()
        let ledger = IOCounter()
        let storage = GatedStorage(memory, features: .analytics, privacy: privacy, counter: ledger)
        try storage.write(Data(), to: "a")
        privacy.disableFeatures(.analytics)
        #expect(throws: GatedIOError.self) { try storage.write(Data(), to: "b") }
        privacy.enableFeatures(.analytics)
        try storage.write(Data(), to: "c")
        #expect(memory.names == ["a", "c"])
        #expect(ledger.counts(for: .analytics).storageAllowed == 2)
        #expect(ledger.counts(for: .analytics).storageRefused == 1)
    }

    @Test func aWrapperOnTwoFeaturesNeedsBoth() async throws {
        let privacy = gate(.push)
        let ledger = IOCounter()
        let recording = RecordingTransport()
        let transport = GatedTransport(recording, features: [.push, .contacts], privacy: privacy, counter: ledger)
        await #expect(throws: GatedIOError.self) {
            try await transport.send(TransportRequest(method: "GET", path: "/"))
        }
        privacy.enableFeatures(.contacts)
        _ = try await transport.send(TransportRequest(method: "GET", path: "/"))
        #expect(recording.requests.count == 1)
        // Counted under each flag, once in the totals.
        #expect(ledger.counts(for: .push).transportRefused == 1)
        #expect(ledger.counts(for: .contacts).transportRefused == 1)
        #expect(ledger.totals.transportRefused == 1)
        #expect(ledger.totals.transportAllowed == 1)
        #expect(ledger.snapshot().map(\.feature) == [.push, .contacts])
    }

    @Test func innerFailuresAreWrappedAndAreNotRefusals() async {
        let transport = GatedTransport(
            RecordingTransport(failing: true),
            features: .push,
            privacy: gate(.push),
            counter: IOCounter()
        )
        do {
            _ = try await transport.send(TransportRequest(method: "GET", path: "/"))
            Issue.record("a failing transport succeeded")
        } catch {
            guard case .failed(let inner) = error else { return #expect(Bool(false), "\(error)") }
            #expect(inner is TransportFailure)
            #expect(!error.isRefusal)
        }
    }

    @Test func purgeDeletesThroughAClosedGateAndReportsWhatWent() throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "noop-runtime-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let privacy = gate(.messageCenter)
        let ledger = IOCounter()
        let storage = GatedStorage(
            FileStorage(directory: directory),
            features: .messageCenter,
            privacy: privacy,
            counter: ledger
        )
        try storage.write(Data("inbox".utf8), to: "inbox.json")
        try storage.write(Data("m".utf8), to: "messages/1.json")
        privacy.disableFeatures(.messageCenter)

        #expect(try storage.purge() == ["inbox.json", "messages/1.json"])
        #expect(!FileManager.default.fileExists(atPath: directory.path(percentEncoded: false)))
        #expect(try storage.purge() == [])
        #expect(ledger.counts(for: .messageCenter).purges == 2)
    }

    /// The program that crashed every release build (SIGSEGV in `swift_task_localValuePush`): a gate over the file
    /// store, push on, one gated write into a `FileStorage`, from a task and from a plain thread. The write checks the
    /// gate again under the data directory's lock, through a task-local; `swift test -c release` runs this optimized.
    @Test func aGatedWriteOverTheFileStoresLandsItsFileFromATaskAndFromAThread() async throws {
        let root = URL(filePath: NSTemporaryDirectory()).appending(path: "noop-runtime-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let files = PrivacyDataDirectory(url: root.appending(path: "privacy"))
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: files.stateFile))
        privacy.enableFeatures(.push)
        let storage = GatedStorage(
            FileStorage(directory: root.appending(path: "push")), features: .push, privacy: privacy)

        try await Task.detached { try storage.write(Data("from a task".utf8), to: "task.json") }.value
        let fromThread: Result<Void, GatedIOError> = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    returning: Result { () throws(GatedIOError) in
                        try storage.write(Data("from a thread".utf8), to: "thread.json")
                    })
            }
        }
        try fromThread.get()

        #expect(try storage.read("task.json") == Data("from a task".utf8))
        #expect(try storage.read("thread.json") == Data("from a thread".utf8))
        let onDisk = try Data(contentsOf: root.appending(path: "push/thread.json"))
        #expect(onDisk == Data("from a thread".utf8))
    }

    @Test func fileStorageCreatesNothingUntilWrittenAndRefusesNamesOutsideItsDirectory() throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "noop-runtime-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let storage = FileStorage(directory: directory)
        #expect(try storage.read("a") == nil)
        #expect(try storage.remove("a") == false)
        #expect(try storage.removeAll() == [])
        #expect(!FileManager.default.fileExists(atPath: directory.path(percentEncoded: false)))

        for name in ["", "/etc/passwd", "../x", "a/../../x", "a//b", "./a"] {
            #expect(throws: FileStorageError.invalidName(name)) { try storage.write(Data(), to: name) }
        }
        try storage.write(Data("1".utf8), to: "a/b")
        #expect(try storage.read("a/b") == Data("1".utf8))
        #expect(try storage.remove("a/b"))
    }

    @Test func noopStandInsDoNothingAndNeverFail() async throws {
        let storage = NoopStorage()
        try storage.write(Data("x".utf8), to: "a")
        #expect(try storage.read("a") == nil)
        #expect(try storage.remove("a") == false)
        #expect(try storage.removeAll().isEmpty)
        let response = try await NoopTransport().send(TransportRequest(method: "POST", path: "/"))
        #expect(response == .notSent)
        #expect(!response.isSuccess)
    }
}

@Suite struct IOCounterTests {
    @Test func countsArePerFlagAndTotalsCountEachOperationOnce() {
        let ledger = IOCounter()
        ledger.record(.storage, .allowed, for: [.analytics, .contacts])
        ledger.record(.event, .refused, for: .analytics)
        ledger.record(.exit, .allowed, for: .custom(bit: 31))
        #expect(ledger.counts(for: .analytics).storageAllowed == 1)
        #expect(ledger.counts(for: .analytics).eventsRefused == 1)
        #expect(ledger.counts(for: .contacts).storageAllowed == 1)
        #expect(ledger.counts(for: .custom(bit: 31)).exitRequestsSent == 1)
        #expect(ledger.counts(for: [.analytics, .contacts]).storageAllowed == 2)
        #expect(ledger.totals.storageAllowed == 1)
        #expect(ledger.totals.eventsRefused == 1)
        #expect(ledger.snapshot().map(\.feature) == [.analytics, .contacts, .custom(bit: 31)])
        #expect(ledger.counts(for: .push).isZero)
        #expect(!ledger.totals.isSilent)
        #expect(ledger.counts(for: .analytics).description == "storage: 1 allowed; event: 1 refused")
    }

    @Test func concurrentRecordingLosesNothing() async {
        let ledger = IOCounter()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for _ in 0..<5_000 {
                        ledger.record(
                            .transport, task.isMultiple(of: 2) ? .allowed : .refused, for: [.push, .analytics])
                    }
                }
            }
        }
        #expect(ledger.counts(for: .push).transportAllowed == 20_000)
        #expect(ledger.counts(for: .analytics).transportRefused == 20_000)
        #expect(ledger.totals.transportAllowed + ledger.totals.transportRefused == 40_000)
    }
}

/// The renamed spellings (`IOLedger`, `ledger:`) still compile and count into the same ``IOCounter``: the one place
/// outside the migration notes that uses them.
@Suite struct RenamedIOCounterSpellingsTests {
    @available(*, deprecated)
    @Test func theRenamedSpellingsStillCompileAndCountIntoTheSameCounter() {
        let ledger: IOLedger = IOLedger()
        let storage = GatedStorage(ExplodingStorage(), features: .analytics, privacy: gate(), ledger: ledger)
        let transport = GatedTransport(ExplodingTransport(), features: .analytics, privacy: gate(), ledger: ledger)
        let buffer = GatedEventBuffer<Int>(
            features: .analytics, capacity: 4, privacy: gate(), backends: [ExplodingBackend()], ledger: ledger)
        #expect(throws: GatedIOError.self) { try storage.read("queue") }
        #expect(throws: GatedIOError.self) { try transport.admit() }
        #expect(throws: GatedIOError.self) { try buffer.track(1) }
        let counts = ledger.counts(for: .analytics)
        #expect(counts.storageRefused == 1)
        #expect(counts.transportRefused == 1)
        #expect(counts.eventsRefused == 1)
        #expect(ledger.totals.isSilent)
    }
}

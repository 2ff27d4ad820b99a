import FeatureGate
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The inter-process lock, read-modify-writes, ledger appends and merged saves, in one process (the suite
/// `MultiProcessTests` runs them across processes).
@Suite struct SharedDirectoryTests {
    static let lock = PrivacyDataDirectory.lockFileName

    func names(_ directory: TemporaryDirectory) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    @Test func theLockFileIsCreatedOnlyWhenSomethingIsWrittenOrDeleted() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let data = PrivacyDataDirectory(url: directory.url)
        // Reading, removing what is not there and cleaning a directory without temporaries change nothing.
        #expect(try FileFeatureStore(url: data.stateFile).load() == nil)
        #expect(try FileConsentLedger(url: data.consentLedgerFile).load().records.isEmpty)
        try FileFeatureStore(url: data.stateFile).remove()
        #expect(AtomicFile.removeTemporaries(in: directory.url).removed.isEmpty)
        #expect(names(directory).isEmpty)

        try FileFeatureStore(url: data.stateFile).save(FeatureStateRecord(enabledFeatures: .push).encoded())
        #expect(names(directory) == [Self.lock, PrivacyDataDirectory.stateFileName])
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.path + "/" + Self.lock)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)
    }

    @Test func aLinkOrAFifoAtTheLockIsReplacedNeverFollowed() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let target = directory.path + "/target"
        #expect(FileManager.default.createFile(atPath: target, contents: Data("kept".utf8)))
        let lockPath = directory.path + "/" + Self.lock
        for plant in [
            { try FileManager.default.createSymbolicLink(atPath: lockPath, withDestinationPath: target) },
            { #expect(mkfifo(lockPath, 0o600) == 0) },
        ] {
            try? FileManager.default.removeItem(atPath: lockPath)
            try plant()
            try FileFeatureStore(url: directory.url.appending(path: "state.json")).save(Data("x".utf8))
            let attributes = try FileManager.default.attributesOfItem(atPath: lockPath)
            #expect(attributes[.type] as? FileAttributeType == .typeRegular)
            #expect(FileManager.default.contents(atPath: target) == Data("kept".utf8))
        }
    }

    @Test func aWriterWaitsWhileAnotherHoldsTheLock() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let file = directory.url.appending(path: "state.json")
        try FileFeatureStore(url: file).save(Data("old".utf8))
        // Another holder: a separate open of the lock file, as another process's would be.
        // Close-on-exec: a child another test starts meanwhile must not keep this lock after `close`.
        let holder = open(directory.path + "/" + Self.lock, O_RDWR | O_CLOEXEC)
        #expect(holder >= 0 && flock(holder, LOCK_EX) == 0)
        let finished = Collector<Bool>()
        let writer = Thread {
            try? FileFeatureStore(url: file).save(Data("new".utf8))
            finished.append(true)
        }
        writer.start()
        usleep(100_000)
        // Whatever the timing, the write cannot have happened while the lock is held.
        #expect(finished.all.isEmpty)
        #expect(try FileFeatureStore(url: file).load() == Data("old".utf8))
        close(holder)
        while finished.all.isEmpty { usleep(1_000) }
        #expect(try FileFeatureStore(url: file).load() == Data("new".utf8))
    }

    @Test func concurrentReadModifyWritesLoseNoUpdate() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let location = FileLocation(file: directory.url.appending(path: "counter"))
        let (tasks, updates) = (8, 250)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    for _ in 0..<updates {
                        try? AtomicFile.update(location, limit: 64) { data in
                            let count = data.flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
                            return Data(String(count + 1).utf8)
                        }
                    }
                }
            }
        }
        let data = try #require(try AtomicFile.read(location, limit: 64))
        #expect(String(decoding: data, as: UTF8.self) == String(tasks * updates))
    }

    @Test func anUpdateThatReturnsNilWritesNothing() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = FileFeatureStore(url: directory.url.appending(path: "state.json"))
        try store.save(Data("same".utf8))
        var seen: Data?
        try store.update { data in
            seen = data
            return nil
        }
        #expect(seen == Data("same".utf8))
        #expect(try store.load() == Data("same".utf8))
    }

    // MARK: The ledger

    func ledger(_ directory: TemporaryDirectory, holding text: Data) throws -> FileConsentLedger {
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let url = directory.url.appending(path: PrivacyDataDirectory.consentLedgerFileName)
        #expect(FileManager.default.createFile(atPath: url.path(percentEncoded: false), contents: text))
        return FileConsentLedger(url: url)
    }

    @Test func aLastLineACrashCutShortIsIgnoredThenRemovedByTheNextAppend() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let line = ConsentRecordLineFixture.line
        for cut in [1, 20, line.count - 2] {
            let ledger = try ledger(directory, holding: line + line + line.prefix(cut))
            let contents = try ledger.load()
            #expect(contents.records.count == 2 && contents.unreadableEntries == 0, "cut at \(cut)")
            #expect(try ledger.exportJSONLines() == line + line)
            try ledger.append(record(.advertising, .unknown, .denied))
            let after = try ledger.load()
            #expect(after.records.count == 3 && after.unreadableEntries == 0, "cut at \(cut)")
            #expect(after.records.last?.category == .advertising)
            #expect(try ledger.exportJSONLines() == FileManager.default.contents(atPath: ledger.url.path()))
        }
    }

    @Test func aWholeLastRecordWithoutItsNewlineIsKept() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let line = ConsentRecordLineFixture.line
        let ledger = try ledger(directory, holding: line.dropLast())
        #expect(try ledger.load().records.count == 1)
        try ledger.append(record(.advertising, .unknown, .denied))
        #expect(try ledger.load().records.map(\.category) == [.analytics, .advertising])
    }

    @Test func aLastLineLongerThanAnyRecordIsKeptAsAnUnreadableEntry() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let garbage = Data(repeating: UInt8(ascii: "x"), count: FileConsentLedger.maximumLineLength + 10)
        let ledger = try ledger(directory, holding: ConsentRecordLineFixture.line + garbage)
        #expect(try ledger.load().unreadableEntries == 1)
        try ledger.append(record(.advertising, .unknown, .denied))
        let contents = try ledger.load()
        #expect(contents.records.count == 2 && contents.unreadableEntries == 1)
        let exported = try ledger.exportJSONLines()
        #expect(exported.starts(with: ConsentRecordLineFixture.line + garbage + Data("\n".utf8)))
        #expect(exported == FileManager.default.contents(atPath: ledger.url.path()))
    }

    @Test func aLedgerLargerThanTheOldLimitTakesAppendsAndReadsInPieces() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        // 17 MiB of records: the limit before appends (16 MiB) refused it.
        let line = ConsentRecordLineFixture.line
        let count = 17 * 1024 * 1024 / line.count + 1
        var text = Data(capacity: count * line.count)
        for _ in 0..<count { text.append(line) }
        let ledger = try ledger(directory, holding: text)
        try ledger.append(record(.advertising, .unknown, .denied))
        let contents = try ledger.load()
        #expect(contents.records.count == count + 1 && contents.unreadableEntries == 0)
        #expect(contents.records.last?.category == .advertising)
    }

    // MARK: Merged saves

    @Test func aMergedSaveKeepsWhatItDidNotChange() {
        let custom = Feature.custom(bit: 20)
        let before = FeatureStateRecord(enabledFeatures: [.push], decidedFeatures: [.push])
        let after = FeatureStateRecord(
            enabledFeatures: [.push, .analytics], decidedFeatures: [.push, .analytics],
            deniedConsentCategories: [.advertising])
        // Another process meanwhile: push off, a flag this catalog lacks on, analytics refused.
        let reread = FeatureStateRecord(
            enabledFeatures: custom, decidedFeatures: [.push, custom], deniedConsentCategories: [.analytics])
        let merged = reread.merging(changeFrom: before, to: after)
        #expect(merged.enabledFeatures == [.analytics, custom])
        #expect(merged.decidedFeatures == [.push, .analytics, custom])
        #expect(merged.deniedConsentCategories == [.analytics, .advertising])
        // Dropping a refusal drops it from the re-read record too.
        let unrefused = merged.merging(changeFrom: after, to: before)
        #expect(unrefused.deniedConsentCategories == [.analytics])
    }

    @Test func aManagerSavingKeepsAnotherProcesssDecisionsRefusalsAndUnknownFlags() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = FileFeatureStore(url: directory.url.appending(path: "state.json"))
        let custom = Feature.custom(bit: 17)
        let wide = try FeatureCatalog.builtIn.registering("custom", as: custom)
        // Both start from the same record; the narrow one's catalog lacks the custom flag.
        try store.save(FeatureStateRecord(enabledFeatures: [.push, custom]).encoded())
        let narrow = manager([], store: store)
        let other = manager([], store: store, catalog: wide)
        other.disableFeatures(.push)
        try await ConsentManager(privacy: other, ledger: InMemoryConsentLedger())
            .setStatus(.denied, for: .advertising, source: .user)
        narrow.enableFeatures(.analytics)
        let saved = try FeatureStateRecord(decoding: try #require(try store.load()))
        #expect(saved.enabledFeatures == [.analytics, custom])
        #expect(saved.decidedFeatures.contains([.push, .analytics, custom]))
        #expect(saved.deniedConsentCategories == [.advertising])
    }

    @Test func aRecordOfANewerFormatIsNeverOverwritten() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let store = FileFeatureStore(url: directory.url.appending(path: "state.json"))
        let newer = Data(#"{"version":3,"enabledFeatures":0,"decidedFeatures":4,"somethingNew":[1]}"#.utf8)
        try store.save(newer)
        let diagnostics = Collector<PrivacyManagerDiagnostic>()
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: store,
            diagnosticHandler: { diagnostics.append($0) })
        privacy.enableFeatures(.push)
        #expect(try store.load() == newer)
        let failure = diagnostics.all.compactMap { diagnostic -> PrivacyManagerDiagnostic.StoredStateError? in
            guard case .saveFailed(_, let error) = diagnostic else { return nil }
            return error as? PrivacyManagerDiagnostic.StoredStateError
        }
        #expect(failure == [.unsupportedVersion(found: 3, supported: FeatureStateRecord.currentVersion)])
    }
}

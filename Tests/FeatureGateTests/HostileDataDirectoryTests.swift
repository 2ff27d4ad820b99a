import FeatureGate
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What another process of the app group can leave in the data directory: links, FIFOs, huge files. Nothing there
/// can make FeatureGate read, write or delete outside the directory, block, or load a huge file into memory.
@Suite struct HostileDataDirectoryTests {
    /// A data directory and a directory outside it holding a file that must stay untouched.
    private struct Scene {
        let root = TemporaryDirectory()
        var data: PrivacyDataDirectory { PrivacyDataDirectory(url: root.url.appending(path: "data")) }
        var outside: URL { root.url.appending(path: "outside") }
        var secretFile: URL { outside.appending(path: "secret.txt") }
        let secret = Data("SECRET-BYTES-OUTSIDE".utf8)

        init() throws {
            try FileManager.default.createDirectory(
                at: root.url.appending(path: "data"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            try secret.write(to: secretFile)
        }

        func link(_ url: URL, to target: URL) throws {
            try FileManager.default.createSymbolicLink(
                atPath: url.path(percentEncoded: false), withDestinationPath: target.path(percentEncoded: false))
        }

        func fifo(_ url: URL) {
            #expect(mkfifo(url.path(percentEncoded: false), 0o600) == 0)
        }

        /// A sparse file of `size` bytes: it takes no disk space, and reading it whole would take `size` of memory.
        func sparse(_ url: URL, size: Int) {
            let fd = open(url.path(percentEncoded: false), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            #expect(fd >= 0)
            #expect(ftruncate(fd, off_t(size)) == 0)
            close(fd)
        }

        func isSymbolicLink(_ url: URL) -> Bool {
            var status = stat()
            return lstat(url.path(percentEncoded: false), &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
        }

        func cleanUp() { root.cleanUp() }
    }

    private static let twoGiB = 2 * 1024 * 1024 * 1024

    // MARK: Symbolic links

    @Test func aLinkAtTheStateFileIsNeitherReadNorWrittenThrough() async throws {
        let scene = try Scene()
        defer { scene.cleanUp() }
        try scene.link(scene.data.stateFile, to: scene.secretFile)
        let store = FileFeatureStore(url: scene.data.stateFile)
        let error = #expect(throws: FileStoreError.self) { try store.load() }
        #expect(error?.problem == .symbolicLink)

        // Start-up treats it as a corrupt record: the configuration, and no byte of the target in any diagnostic.
        let gate = manager(.push, store: store)
        #expect(gate.enabledFeatures == .push)
        #expect(!gate.isHoldingWrites)
        #expect(gate.startupDiagnostics.count == 1)
        #expect(!"\(gate.startupDiagnostics)".contains("SECRET"))
        // The next change replaces the link itself; the target is untouched.
        gate.disableFeatures(.push)
        #expect(await gate.synchronize())
        #expect(!scene.isSymbolicLink(scene.data.stateFile))
        #expect(try Data(contentsOf: scene.secretFile) == scene.secret)
        #expect(try FeatureStateRecord(decoding: Data(contentsOf: scene.data.stateFile)).enabledFeatures == [])
    }

    @Test func aLinkAtTheLedgerIsNeverCopiedIntoTheAuditTrail() throws {
        let scene = try Scene()
        defer { scene.cleanUp() }
        try scene.link(scene.data.consentLedgerFile, to: scene.secretFile)
        let ledger = FileConsentLedger(url: scene.data.consentLedgerFile)
        #expect((#expect(throws: FileStoreError.self) { try ledger.load() })?.problem == .symbolicLink)
        #expect(
            (#expect(throws: FileStoreError.self) { try ledger.append(record(.analytics, .unknown, .denied)) })?
                .problem == .symbolicLink)
        #expect((#expect(throws: FileStoreError.self) { try ledger.exportJSONLines() })?.problem == .symbolicLink)
        #expect(try Data(contentsOf: scene.secretFile) == scene.secret)
    }

    @Test func aDataDirectoryThatIsALinkIsRefused() throws {
        let scene = try Scene()
        defer { scene.cleanUp() }
        let linked = PrivacyDataDirectory(url: scene.root.url.appending(path: "linked"))
        try scene.link(linked.url, to: scene.outside)
        let store = FileFeatureStore(url: linked.stateFile)
        #expect(
            (#expect(throws: FileStoreError.self) {
                try store.save(FeatureStateRecord(enabledFeatures: .push).encoded())
            })?.problem
                == .symbolicLink)
        #expect((#expect(throws: FileStoreError.self) { try store.load() })?.problem == .symbolicLink)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scene.outside.path) == ["secret.txt"])
    }

    // MARK: FIFOs and huge files

    @Test func aFIFOWhereAFileIsExpectedIsAnErrorAndNeverBlocks() async throws {
        let scene = try Scene()
        defer { scene.cleanUp() }
        for url in [scene.data.stateFile, scene.data.consentLedgerFile, scene.data.anonymousIdentifierFile] {
            scene.fifo(url)
        }
        let expected = FileStoreError.Problem.notRegularFile(found: "a FIFO")
        #expect(
            (#expect(throws: FileStoreError.self) { try FileFeatureStore(url: scene.data.stateFile).load() })?
                .problem == expected)
        let ledger = FileConsentLedger(url: scene.data.consentLedgerFile)
        #expect((#expect(throws: FileStoreError.self) { try ledger.load() })?.problem == expected)

        let privacy = manager(.push, store: FileFeatureStore(url: scene.data.stateFile))
        #expect(privacy.enabledFeatures == .push)
        _ = ConsentManager(privacy: privacy, ledger: ledger)
        let identifier = AnonymousIdentifier(privacy: privacy, url: scene.data.anonymousIdentifierFile)
        #expect((#expect(throws: FileStoreError.self) { try identifier.stored() })?.problem == expected)
        // The last feature going off resets the identifier, which deletes the FIFO without opening it.
        privacy.disableFeatures(.all)
        #expect(!FileManager.default.fileExists(atPath: scene.data.anonymousIdentifierFile.path))
    }

    @Test func aHugeSparseFileIsRefusedUnreadWithItsLimit() throws {
        let scene = try Scene()
        defer { scene.cleanUp() }
        let cases: [(URL, Int, () throws -> Void)] = [
            (
                scene.data.stateFile, FileFeatureStore.maximumRecordSize,
                {
                    _ = try FileFeatureStore(url: scene.data.stateFile).load()
                }
            ),
            (
                scene.data.consentLedgerFile, FileConsentLedger.maximumFileSize,
                {
                    _ = try FileConsentLedger(url: scene.data.consentLedgerFile).load()
                }
            ),
            (
                scene.data.anonymousIdentifierFile, AnonymousIdentifier.maximumFileSize,
                {
                    _ = try AnonymousIdentifier(privacy: manager(.push), url: scene.data.anonymousIdentifierFile)
                        .stored()
                }
            ),
        ]
        for (url, limit, read) in cases {
            scene.sparse(url, size: Self.twoGiB)
            let error = #expect(throws: FileStoreError.self) { try read() }
            #expect(error?.problem == .tooLarge(limit: limit))
            #expect(error?.path == url.path(percentEncoded: false))
            #expect(error?.description.contains("larger than \(limit) bytes") == true)
        }
        // Start-up with every file huge: the configuration, nothing held, and the memory of a small read.
        let gate = manager(.push, store: FileFeatureStore(url: scene.data.stateFile))
        #expect(gate.enabledFeatures == .push)
    }

    @Test func aDeviceNamedOnACommandLineIsRefusedUnread() throws {
        // /dev/zero reports no size and never ends.
        let error = #expect(throws: FileStoreError.self) {
            try AtomicFile.readNamedFile(atPath: "/dev/zero", limit: 1024)
        }
        #expect(error?.problem == .notRegularFile(found: "a character device"))
    }

    @Test func aLedgerLineLongerThanAnyRecordIsAnUnreadableEntry() throws {
        let long = Data(repeating: UInt8(ascii: "x"), count: FileConsentLedger.maximumLineLength + 1)
        let ledger = InMemoryConsentLedger(jsonLines: ConsentRecordLineFixture.line + long + Data("\n".utf8))
        let contents = try ledger.load()
        #expect(contents.records.count == 1)
        #expect(contents.unreadableEntries == 1)
    }

    // MARK: The identifier

    @Test func resetDeletesAnIdentifierItCannotReadWithoutReadingIt() throws {
        let scene = try Scene()
        defer { scene.cleanUp() }
        let identifier = AnonymousIdentifier(privacy: manager(.push), url: scene.data.anonymousIdentifierFile)
        scene.sparse(scene.data.anonymousIdentifierFile, size: Self.twoGiB)
        #expect(throws: FileStoreError.self) { try identifier.stored() }
        #expect(try identifier.reset())
        #expect(!FileManager.default.fileExists(atPath: scene.data.anonymousIdentifierFile.path))

        // A link there is deleted itself, never its target.
        try scene.link(scene.data.anonymousIdentifierFile, to: scene.secretFile)
        #expect(try identifier.reset())
        #expect(!scene.isSymbolicLink(scene.data.anonymousIdentifierFile))
        #expect(try Data(contentsOf: scene.secretFile) == scene.secret)
    }

    // MARK: Temporary files

    @Test(arguments: [1, 200, 230, 250, 255])
    func temporaryNamesStayWithinTheFileSystemLimitForEveryLegalName(length: Int) throws {
        for unit in ["a", "é", "😀"] {
            let name = String(repeating: unit, count: length / unit.utf8.count)
            let temporary = AtomicFile.temporaryName(for: name)
            #expect(temporary.utf8.count <= 255, "\(unit) × \(length)")
            #expect(AtomicFile.isTemporaryName(temporary))
        }
        let scene = try Scene()
        defer { scene.cleanUp() }
        let url = scene.data.url.appending(path: String(repeating: "n", count: length))
        try AtomicFile.write(Data("x".utf8), to: url)
        #expect(try AtomicFile.read(at: url, limit: 10) == Data("x".utf8))
        // The file and the lock: no temporary file.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scene.data.url.path).count == 2)
    }

    @Test func onlyTheNamesOfInterruptedWritesAreTemporaryNames() {
        #expect(AtomicFile.isTemporaryName(".anonymous-id.tmp-12-3"))
        for name in ["anonymous-id", ".anonymous-id", ".x.tmp-", ".x.tmp-1", ".x.tmp-1-", ".x.tmp-a-1", "x.tmp-1-2"] {
            #expect(!AtomicFile.isTemporaryName(name), "\(name)")
        }
    }

    @Test func removingTemporariesDeletesOnlyThemAndSaysWhich() throws {
        let scene = try Scene()
        defer { scene.cleanUp() }
        let directory = scene.data.url.path(percentEncoded: false)
        for name in [".anonymous-id.tmp-99-1", ".featuregate-state.json.tmp-99-2", "featuregate-state.json"] {
            #expect(FileManager.default.createFile(atPath: directory + "/" + name, contents: Data("x".utf8)))
        }
        let removal = AtomicFile.removeTemporaries(in: scene.data.url)
        #expect(removal.removed == [".anonymous-id.tmp-99-1", ".featuregate-state.json.tmp-99-2"])
        #expect(removal.failures.isEmpty)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == [
                PrivacyDataDirectory.lockFileName, "featuregate-state.json",
            ])
    }
}

/// One valid ledger line, for tests that mix it with broken ones.
enum ConsentRecordLineFixture {
    static var line: Data {
        let ledger = InMemoryConsentLedger()
        try? ledger.append(record(.analytics, .unknown, .granted))
        return (try? ledger.exportJSONLines()) ?? Data()
    }
}

/// Text from outside is escaped wherever it is shown, and secrets are never shown.
@Suite struct UntrustedTextTests {
    @Test func controlCharactersAreEscapedAsSwiftWritesThem() {
        #expect(UntrustedText.escaped("a\nb\r\tc\u{1B}[2J\u{7}") == #"a\nb\r\tc\u{1B}[2J\u{7}"#)
        #expect(UntrustedText.escaped("\u{202E}evil\u{0}") == #"\u{202E}evil\u{0}"#)
        #expect(UntrustedText.escaped("plain, ünïcode") == "plain, ünïcode")
    }

    @Test func longValuesAreCutWithTheirLength() {
        let long = String(repeating: "x", count: 1000)
        #expect(UntrustedText.escaped(long) == String(repeating: "x", count: 200) + "… (1000 bytes)")
        #expect(UntrustedText.quoted(long, limit: 3) == "\"xxx\"… (1000 bytes)")
        #expect(UntrustedText.quoted(#"a"b\"#) == #""a\"b\\""#)
    }

    @Test func printingAPseudonymizerShowsNoKey() {
        struct KeyHolder: KeyedHasher {
            let key: [UInt8] = Array("TOP-SECRET-KEY".utf8)
            func authenticationCode(for message: [UInt8]) -> [UInt8] { key + message }
        }
        let pseudonymizer = Pseudonymizer(hasher: KeyHolder())
        var dumped = ""
        dump(pseudonymizer, to: &dumped)
        for text in ["\(pseudonymizer)", String(reflecting: pseudonymizer), dumped] {
            #expect(!text.contains("TOP-SECRET") && !text.contains("84, 79, 80"), "\(text)")
        }
    }

    @Test func printingAnIdentifierShowsItsFileNotItsValue() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let identifier = AnonymousIdentifier(privacy: manager(.push), url: directory.url.appending(path: "id\n"))
        let value = try #require(try identifier.current())
        #expect(!"\(identifier)".contains(value.uuidString))
        #expect("\(identifier)".hasSuffix(#"/id\n)"#))
    }

    @Test func diagnosticsEscapeWhatTheyQuote() {
        let store = FileFeatureStore(url: URL(filePath: "/tmp/\u{1B}[2Jstate.json"))
        #expect(store.description == #"/tmp/\u{1B}[2Jstate.json"#)
        #expect(ConsentCategory("evil\nline").description == #"evil\nline"#)
        let error = #expect(throws: PrivacyManagerDiagnostic.StoredStateError.self) {
            try FeatureStateRecord(decoding: Data("\u{1B}[2J\n".utf8))
        }
        #expect(!"\(error as Any)".contains("\u{1B}"))
        #expect("\(error as Any)".contains(#"\u{1B}[2J\n"#))
    }
}

import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// The pending-changes folder (`.featuregate-intents`) when something else is at its name: a foreign entry (a FIFO, a
/// regular file, a link) is moved aside and reported, so a take-away made behind another holder's lock is durable all
/// the same; and a take-away that cannot be made durable says so, through the same diagnostic, on every path.
@Suite struct IntentFolderTests {
    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])

    enum Foreign: String, CaseIterable {
        case fifo, file, link
    }

    /// Reads a payload as the decimal raw bits of the flags it disables.
    struct BitsInterpreter: RemotePayloadInterpreter {
        struct Invalid: Error {}
        func disables(in payload: Data) throws -> RemoteDisables {
            guard let bits = UInt(String(decoding: payload, as: UTF8.self)) else { throw Invalid() }
            return RemoteDisables(features: Feature(rawValue: bits))
        }
    }

    /// Takes the data directory's lock as another process would (its own open file), until `release` is called.
    static func holdLock(of data: PrivacyDataDirectory) -> (@Sendable () -> Void) {
        let fd = open(
            data.url.path(percentEncoded: false) + "/" + PrivacyDataDirectory.lockFileName, O_RDWR | O_CREAT, 0o600)
        _ = flock(fd, LOCK_EX)
        return { _ = close(fd) }
    }

    /// A directory where analytics is granted and push and messageCenter are enabled, with a gate and consent on it.
    static func prepared(
        _ directory: TemporaryDirectory, diagnostics: Collector<PrivacyManagerDiagnostic>
    ) async throws -> (PrivacyDataDirectory, PrivacyManager, ConsentManager) {
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let first = launchGateAndConsent(on: data, policy: Self.policy)
        try await first.consent.setStatus(.granted, for: .analytics, source: .user)
        first.privacy.enableFeatures([.push, .messageCenter])
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
            consentPolicy: Self.policy,
            remoteLayer: RemoteLayerFile(url: data.remoteLayerFile, interpreter: BitsInterpreter()),
            diagnosticHandler: { diagnostics.append($0) })
        let consent = ConsentManager(privacy: privacy, ledger: FileConsentLedger(url: data.consentLedgerFile))
        return (data, privacy, consent)
    }

    @Test(arguments: Foreign.allCases)
    func aForeignEntryAtTheIntentsFolderIsMovedAsideAndTheHeldNoIsDurable(foreign: Foreign) async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let diagnostics = Collector<PrivacyManagerDiagnostic>()
        let (data, privacy, consent) = try await Self.prepared(directory, diagnostics: diagnostics)
        let outside = directory.url.appending(path: "OUT")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let folder = data.url.appending(path: IntentJournal.directoryName).path(percentEncoded: false)
        switch foreign {
        case .fifo: #expect(mkfifo(folder, 0o600) == 0)
        case .file: try Data("not a folder".utf8).write(to: URL(filePath: folder))
        case .link: try FileManager.default.createSymbolicLink(atPath: folder, withDestinationPath: outside.path)
        }

        let release = Self.holdLock(of: data)
        privacy.disableFeatures(.push)
        // A refusal takes no lock (issue 47, item 1): it returns once its intent is written.
        #expect(try await consent.setStatus(.denied, for: .analytics, source: .user)?.newStatus == .denied)
        // Another process still holds the lock, and this one is gone (killed): a fresh start reads the intents.
        let fresh = launchGateAndConsent(on: data, policy: Self.policy)
        let freshStatus = await fresh.consent.status(for: .analytics)
        release()

        #expect(!fresh.privacy.isEnabled(.push) && fresh.privacy.isEnabled(.messageCenter))
        #expect(freshStatus == .denied && !fresh.privacy.isEnabled(.analytics))
        #expect(diagnostics.all.contains { if case .foreignEntryMovedAside = $0 { true } else { false } })
        #expect(!diagnostics.all.contains { if case .takeAwayNotDurable = $0 { true } else { false } })
        var status = stat()
        #expect(lstat(folder, &status) != 0 || status.st_mode & S_IFMT == S_IFDIR)
        let written = try FileManager.default.subpathsOfDirectory(atPath: outside.path(percentEncoded: false))
        #expect(written.isEmpty, "written outside the data directory: \(written)")
    }

    /// A file system on which the intents folder can be neither created nor moved aside (as a disk that turned
    /// read-only would have it), everything else being the system's.
    static let unwritableIntents: FileSystem = {
        let system = FileSystem.system
        let name = IntentJournal.directoryName
        return FileSystem(
            open: system.open, openat: system.openat, close: system.close, dup: system.dup, read: system.read,
            pread: system.pread, write: system.write, truncate: system.truncate, sync: system.sync,
            renameat: { from, old, to, new in
                guard old != name else {
                    errno = EROFS
                    return -1
                }
                return system.renameat(from, old, to, new)
            },
            unlinkat: system.unlinkat, mkdir: system.mkdir,
            mkdirat: { directory, folder, mode in
                guard folder != name else {
                    errno = EROFS
                    return -1
                }
                return system.mkdirat(directory, folder, mode)
            },
            fstat: system.fstat, fstatat: system.fstatat, lstat: system.lstat, fchmodat: system.fchmodat,
            flock: system.flock, entries: system.entries)
    }()

    /// Behind another holder's lock, with the intents folder unwritable, a disable, a consent refusal, revoke-all and
    /// a kill-switch payload each report ``PrivacyManagerDiagnostic/takeAwayNotDurable(store:error:)``.
    @Test func aTakeAwayThatCannotBeMadeDurableSaysSoOnEveryPath() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let diagnostics = Collector<PrivacyManagerDiagnostic>()
        let (data, privacy, consent) = try await Self.prepared(directory, diagnostics: diagnostics)
        let release = Self.holdLock(of: data)
        defer { release() }
        func notDurable() -> Int {
            diagnostics.all.filter { if case .takeAwayNotDurable = $0 { true } else { false } }.count
        }
        try await FileSystem.$current.withValue(Self.unwritableIntents) {
            privacy.disableFeatures(.push)
            #expect(notDurable() == 1, "flag: \(diagnostics.all)")
            await #expect(throws: ConsentRecordingError.self) {
                try await consent.setStatus(.denied, for: .analytics, source: .user)
            }
            #expect(notDurable() == 2, "consent: \(diagnostics.all)")
            try privacy.applyRemotePayload(Data(String(Feature.messageCenter.rawValue).utf8))
            #expect(notDurable() == 3, "kill switch: \(diagnostics.all)")
            _ = privacy.beginRevocation(
                PendingRevocation(anonymousIdentifier: nil, isErasureOwed: false), refusing: [.analytics])
            #expect(notDurable() >= 4, "revoke-all: \(diagnostics.all)")
        }
    }
}

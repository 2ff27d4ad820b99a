import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// What the package reads back from `.featuregate-intents` is hostile input: an intent names only the directory's
/// own files, by plain name, and carries only take-aways; anything else is skipped and reported, never followed.
@Suite struct HostileIntentTests {
    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])

    /// Reads a payload as the decimal raw bits of the flags it disables.
    struct BitsInterpreter: RemotePayloadInterpreter {
        struct Invalid: Error {}
        func disables(in payload: Data) throws -> RemoteDisables {
            guard let bits = UInt(String(decoding: payload, as: UTF8.self)) else { throw Invalid() }
            return RemoteDisables(features: Feature(rawValue: bits))
        }
    }

    static func record(_ status: ConsentStatus, at time: Date = Date()) -> ConsentRecord {
        ConsentRecord(
            category: .analytics, previousStatus: .unknown, newStatus: status, time: time, policyVersion: 1,
            source: .user)
    }

    /// Every entry below `url`, recursively, with its bytes (`nil` for a directory).
    static func contents(of url: URL) -> [String: Data?] {
        let root = url.path(percentEncoded: false)
        var result: [String: Data?] = [:]
        for path in FileManager.default.subpaths(atPath: root) ?? [] {
            result[path] = FileManager.default.contents(atPath: root + "/" + path)
        }
        return result
    }

    /// Forged intents that name files outside the directory (a separator, `..`, an absolute path) or files of the
    /// directory that are not the role's (the anonymous identifier, the lock, another name): the next fold (a
    /// disable with the lock free) and the next start follow none of them; nothing outside the data directory is
    /// created or changed, the directory's other files keep their bytes, and each forged intent is reported.
    @Test func anIntentNamingAnythingButTheDirectorysOwnFilesIsSkippedAndReported() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let outside = directory.url.appending(path: "OUT")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let target = outside.path(percentEncoded: false) + "/absolute-target"
        launchGateAndConsent(on: data, policy: Self.policy).privacy.enableFeatures(.push)
        let identifier = Data("kept identifier".utf8)
        try identifier.write(to: data.anonymousIdentifierFile)
        let anchor = data.url.path(percentEncoded: false)
        let forged: [TakeAwayIntent] = [
            TakeAwayIntent(
                stateFile: "x/../../OUT/state-target", ledgerFile: "../OUT/ledger-target", disable: .push,
                records: [Self.record(.denied)]),
            TakeAwayIntent(stateFile: target, disable: .push),
            TakeAwayIntent(stateFile: "..", disable: .push),
            TakeAwayIntent(stateFile: PrivacyDataDirectory.anonymousIdentifierFileName, disable: .push),
            TakeAwayIntent(
                stateFile: PrivacyDataDirectory.stateFileName, ledgerFile: PrivacyDataDirectory.lockFileName,
                disable: .push, records: [Self.record(.denied)]),
            TakeAwayIntent(stateFile: "notes.txt", disable: .push),
            TakeAwayIntent(
                stateFile: nil,
                remote: .init(
                    file: "../OUT/remote-target", base: RemoteLayerFile.digest(of: Data()),
                    record: RemoteLayerRecord(payload: Data("4".utf8)))),
        ]
        for intent in forged { try IntentJournal.record(intent, in: anchor) }
        let lockBefore = FileManager.default.contents(atPath: anchor + "/" + PrivacyDataDirectory.lockFileName)

        let diagnostics = Collector<PrivacyManagerDiagnostic>()
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
            remoteLayer: RemoteLayerFile(url: data.remoteLayerFile, interpreter: BitsInterpreter()),
            diagnosticHandler: { diagnostics.append($0) })
        // None was followed: push stays as the user left it.
        #expect(privacy.isEnabled(.push))
        privacy.disableFeatures(.messageCenter)  // The lock is free: this save folds.
        _ = AtomicFile.withLock(of: data.stateFile, waitingAtMost: nil) {}

        #expect(Self.contents(of: outside).isEmpty, "written outside the data directory: \(Self.contents(of: outside))")
        #expect(!FileManager.default.fileExists(atPath: target))
        let identifierPath = data.anonymousIdentifierFile.path(percentEncoded: false)
        #expect(FileManager.default.contents(atPath: identifierPath) == identifier)
        #expect(FileManager.default.contents(atPath: anchor + "/" + PrivacyDataDirectory.lockFileName) == lockBefore)
        #expect(!FileManager.default.fileExists(atPath: anchor + "/notes.txt"))
        let ignored = diagnostics.all.compactMap { diagnostic -> String? in
            guard case .intentIgnored(let file, _) = diagnostic else { return nil }
            return file
        }
        #expect(Set(ignored).count == forged.count, "\(diagnostics.all)")
        let stored = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
        #expect(stored.enabledFeatures.contains(.push))
    }

    /// A store, ledger or remote layer this process created under another name than the package's is the
    /// directory's own file: its intents are folded as the package's are.
    @Test func anIntentNamingAFileThisProcessKeepsUnderAnotherNameIsFolded() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let stateFile = directory.url.appending(path: "custom-state.json")
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: stateFile))
        privacy.enableFeatures(.push)
        try IntentJournal.record(
            TakeAwayIntent(stateFile: "custom-state.json", disable: .push),
            in: directory.url.path(percentEncoded: false))
        let diagnostics = Collector<PrivacyManagerDiagnostic>()
        let relaunched = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: stateFile),
            diagnosticHandler: { diagnostics.append($0) })
        #expect(!relaunched.isEnabled(.push))
        #expect(diagnostics.all.isEmpty, "\(diagnostics.all)")
    }

    /// A forged intent carrying a grant (the gate state and the ledger say denied): a start reads the category as
    /// denied, the fold does not append the grant, and the start reports it; a grant followed in the same intent by
    /// a refusal of its category (a held grant recorded with the refusal that ended it) is taken whole.
    @Test func anIntentOnlyTakesAwayAGrantInItIsIgnoredAndReported() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let first = launchGateAndConsent(on: data, policy: Self.policy)
        try await first.consent.setStatus(.denied, for: .analytics, source: .user)
        let (state, ledger) = (PrivacyDataDirectory.stateFileName, PrivacyDataDirectory.consentLedgerFileName)
        let anchor = data.url.path(percentEncoded: false)
        try IntentJournal.record(
            TakeAwayIntent(stateFile: state, ledgerFile: ledger, records: [Self.record(.granted)]), in: anchor)

        let diagnostics = Collector<PrivacyManagerDiagnostic>()
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: data.stateFile),
            consentPolicy: Self.policy, diagnosticHandler: { diagnostics.append($0) })
        let consent = ConsentManager(privacy: privacy, ledger: FileConsentLedger(url: data.consentLedgerFile))
        #expect(await consent.status(for: .analytics) == .denied)
        #expect(!privacy.isEnabled(.analytics))
        #expect(diagnostics.all.contains { if case .intentIgnored = $0 { true } else { false } }, "\(diagnostics.all)")
        _ = AtomicFile.withLock(of: data.stateFile, waitingAtMost: nil) {}
        let records = try FileConsentLedger(url: data.consentLedgerFile).load().records
        #expect(!records.contains { $0.newStatus == .granted }, "\(records)")
        let after = launchGateAndConsent(on: data, policy: Self.policy)
        #expect(await after.consent.status(for: .analytics) == .denied)

        // A grant the same intent refuses again after it is the user's order of answers: both are recorded.
        let time = Date()
        try IntentJournal.record(
            TakeAwayIntent(
                stateFile: state, ledgerFile: ledger, disable: .analytics, refuse: [.analytics],
                records: [Self.record(.granted, at: time), Self.record(.denied, at: time)]),
            in: anchor)
        _ = AtomicFile.withLock(of: data.stateFile, waitingAtMost: nil) {}
        let statuses = try FileConsentLedger(url: data.consentLedgerFile).load().records.map(\.newStatus)
        #expect(statuses.suffix(2) == [.granted, .denied])
    }
}

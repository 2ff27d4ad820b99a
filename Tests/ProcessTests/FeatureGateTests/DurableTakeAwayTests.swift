#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// A take-away made while another process keeps the data directory's lock (stopped: a debugger, a suspended
/// process) is on disk before its call returns: the process that made it is killed right after, and a fresh start,
/// with the lock still held and again once it is free, finds the "no" in force, in the ledger and in the gate state.
@Suite struct DurableTakeAwayTests {
    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])
    /// Rounds per kind: each starts two processes and waits for a bound of 100 ms at least once.
    static let rounds = 4

    /// A data directory where analytics is granted and messageCenter enabled.
    static func prepared() async throws -> (TemporaryDirectory, PrivacyDataDirectory) {
        let directory = TemporaryDirectory()
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let (privacy, consent) = launchGateAndConsent(on: data, policy: policy)
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        privacy.enableFeatures(.messageCenter)
        #expect(privacy.isEnabled([.analytics, .messageCenter]))
        return (directory, data)
    }

    /// What a fresh start on `data` finds.
    struct Launch {
        var privacy: PrivacyManager
        var consent: ConsentManager
        var diagnostics: [ConsentDiagnostic]
    }

    static func launch(_ data: PrivacyDataDirectory) -> Launch {
        let diagnostics = Collector<ConsentDiagnostic>()
        let (privacy, consent) = launchGateAndConsent(on: data, policy: policy) { diagnostics.append($0) }
        return Launch(privacy: privacy, consent: consent, diagnostics: diagnostics.all)
    }

    static func intentsFolderExists(_ data: PrivacyDataDirectory) -> Bool {
        let folder = data.url.appending(path: ".featuregate-intents")
        return FileManager.default.fileExists(atPath: folder.path(percentEncoded: false))
    }

    static func stored(_ data: PrivacyDataDirectory) throws -> FeatureStateRecord {
        try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
    }

    static func lastRecord(_ data: PrivacyDataDirectory) throws -> ConsentRecord? {
        try FileConsentLedger(url: data.consentLedgerFile).load().records.last { $0.category == .analytics }
    }

    @Test(arguments: ["consent", "disable", "revoke"])
    func aKilledProcessesAcknowledgedNoIsInForceInTheNextProcess(kind: String) async throws {
        var lost = 0
        for _ in 0..<Self.rounds {
            let (directory, data) = try await Self.prepared()
            defer { directory.cleanUp() }
            let holder = try StoppedLockHolder(directory: data.url)
            defer { holder.release() }
            let returned = try takeAwayAndKill(kind, in: data.url)
            #expect(returned, "\(kind) did not return while another process held the lock")
            guard returned else { continue }

            // With the lock still held: the next process reads the intent over the files.
            let held = Self.launch(data)
            let taken: Bool
            let status = await held.consent.status(for: .analytics)
            switch kind {
            case "consent":
                taken =
                    !held.privacy.isEnabled(.analytics) && held.privacy.isEnabled(.messageCenter) && status == .denied
            case "disable":
                taken = !held.privacy.isEnabled(.messageCenter) && held.privacy.isEnabled(.analytics)
            default:
                taken = held.privacy.isEnabled([]) && held.privacy.pendingRevocation != nil
            }
            if !taken { lost += 1 }
            #expect(!held.diagnostics.contains { if case .refusalMissingFromLedger = $0 { true } else { false } })

            // Once the lock is free, a start folds it into the ledger and the gate state.
            holder.release()
            _ = Self.launch(data)
            #expect(eventually(within: 10) { !Self.intentsFolderExists(data) }, "the intent was not folded")
            let record = try Self.stored(data)
            switch kind {
            case "consent":
                #expect(try Self.lastRecord(data)?.newStatus == .denied)
                #expect(record.deniedConsentCategories.contains(.analytics))
                #expect(record.decidedFeatures.contains(.analytics) && !record.enabledFeatures.contains(.analytics))
                #expect(record.enabledFeatures.contains(.messageCenter))
            case "disable":
                #expect(record.decidedFeatures.contains(.messageCenter))
                #expect(!record.enabledFeatures.contains(.messageCenter) && record.enabledFeatures.contains(.analytics))
            default:
                #expect(record.enabledFeatures.isEmpty && record.pendingRevocation != nil)
                #expect(record.deniedConsentCategories.contains(.analytics))
                #expect(try Self.lastRecord(data)?.newStatus == .denied)
            }
            let after = Self.launch(data)
            #expect(!after.privacy.isEnabled(kind == "disable" ? .messageCenter : .analytics))
            #expect(after.diagnostics.isEmpty, "\(after.diagnostics)")
        }
        #expect(lost == 0, "\(kind): \(lost) of \(Self.rounds) acknowledged take-aways lost")
    }
}
#endif

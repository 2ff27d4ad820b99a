#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// The ledger is the commit point: the gate state records how far into it it reflects, and a start whose state
/// lags (a process killed between a change's record and its gate state) applies the records after that point, so
/// the ledger, the gate state and a fresh start agree (issue 36).
@Suite struct LedgerCommitPointTests {
    static let policy = ConsentPolicy(version: 1, features: [.analytics: .analytics])

    @Test func aGrantRecordedButNotSavedInTheGateStateIsAppliedByTheNextStart() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let (_, consent) = launchGateAndConsent(on: data, policy: Self.policy)
        try await consent.setStatus(.denied, for: .analytics, source: .user)
        let denied = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
        #expect(denied.deniedConsentCategories == [.analytics])
        // A process killed right after its grant's record: the ledger has it, the gate state does not.
        try FileConsentLedger(url: data.consentLedgerFile).append(
            ConsentRecord(
                category: .analytics, previousStatus: .denied, newStatus: .granted, time: Date(), policyVersion: 1,
                source: .user))

        let diagnostics = Collector<ConsentDiagnostic>()
        let (privacy, fresh) = launchGateAndConsent(on: data, policy: Self.policy) { diagnostics.append($0) }
        #expect(await fresh.status(for: .analytics) == .granted)
        #expect(privacy.isEnabled(.analytics))
        #expect(!diagnostics.all.contains { if case .refusalMissingFromLedger = $0 { true } else { false } })
        #expect(diagnostics.all.contains { if case .gateStateBehindLedger(_, 1) = $0 { true } else { false } })
        // Replayed into the gate state, with the point it now reflects: the next start has nothing to replay.
        let replayed = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
        #expect(replayed.deniedConsentCategories.isEmpty && replayed.enabledFeatures.contains(.analytics))
        let again = Collector<ConsentDiagnostic>()
        let (next, _) = launchGateAndConsent(on: data, policy: Self.policy) { again.append($0) }
        #expect(next.isEnabled(.analytics))
        #expect(again.all.isEmpty, "\(again.all)")
    }

    @Test func aGrantRecordedAfterTheFirstGateStateWithNoConsentChangeIsAppliedByTheNextStart() async throws {
        // A fresh directory: the first save of the gate state is not a consent change (a flag turned on), so no
        // record of the ledger has been reflected yet; then a grant is recorded and its process killed before its
        // gate state is saved. The state saved first reflects none of the ledger: the next start replays it all.
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let (privacy, _) = launchGateAndConsent(on: data, policy: Self.policy)
        privacy.enableFeatures(.push)
        let saved = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
        #expect(saved.enabledFeatures == .push && saved.ledgerLength == 0)
        try FileConsentLedger(url: data.consentLedgerFile).append(
            ConsentRecord(
                category: .analytics, previousStatus: .unknown, newStatus: .granted, time: Date(), policyVersion: 1,
                source: .user))

        let diagnostics = Collector<ConsentDiagnostic>()
        let (fresh, consent) = launchGateAndConsent(on: data, policy: Self.policy) { diagnostics.append($0) }
        #expect(await consent.status(for: .analytics) == .granted)
        #expect(fresh.isEnabled(.analytics) && fresh.isEnabled(.push))
        #expect(diagnostics.all.contains { if case .gateStateBehindLedger(_, 1) = $0 { true } else { false } })
        let replayed = try FeatureStateRecord(decoding: #require(try FileFeatureStore(url: data.stateFile).load()))
        #expect(replayed.enabledFeatures == [.push, .analytics])
    }

    @Test func aGrantReplayedOverNoGateStateIsAppliedWithoutCreatingIt() async throws {
        // A process killed after its first grant's record, before any gate state was saved: the start replays it
        // (no state reflects none of the ledger) in memory only, as start-up creates no file.
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        try FileConsentLedger(url: data.consentLedgerFile).append(
            ConsentRecord(
                category: .analytics, previousStatus: .unknown, newStatus: .granted, time: Date(), policyVersion: 1,
                source: .user))
        let (privacy, consent) = launchGateAndConsent(on: data, policy: Self.policy)
        #expect(await consent.status(for: .analytics) == .granted)
        #expect(privacy.isEnabled(.analytics))
        #expect(!FileManager.default.fileExists(atPath: data.stateFile.path(percentEncoded: false)))
    }

    @Test func aRefusalWhoseRecordTheLedgerRefusedStillHolds() async throws {
        // The other way round: the gate state's refusal is later than the ledger's last record. It stands.
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        let (_, consent) = launchGateAndConsent(on: data, policy: Self.policy)
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        // A denial whose append the ledger refused: the gate state keeps it, at the point it reflected before.
        let store = FileFeatureStore(url: data.stateFile)
        var record = try FeatureStateRecord(decoding: #require(try store.load()))
        record.deniedConsentCategories.insert(.analytics)
        record.enabledFeatures.remove(.analytics)
        try store.save(record.encoded())

        let diagnostics = Collector<ConsentDiagnostic>()
        let (fresh, freshConsent) = launchGateAndConsent(on: data, policy: Self.policy) { diagnostics.append($0) }
        #expect(await freshConsent.status(for: .analytics) == .denied)
        #expect(!fresh.isEnabled(.analytics))
        #expect(diagnostics.all.contains { if case .refusalMissingFromLedger = $0 { true } else { false } })
    }

    @Test func afterKillsMidChangeAFreshStartAgreesWithTheLedger() async throws {
        let seed = MultiProcessTests.seed()
        var random = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        try FileManager.default.createDirectory(at: data.url, withIntermediateDirectories: true)
        let kills = 60
        var disagreements: [String] = []
        for round in 0..<kills {
            let writer = try startFeatureStoreWriter([
                "burst", data.url.path(percentEncoded: false), String(seed &+ UInt64(round)), "100000",
            ])
            usleep(UInt32.random(in: 60_000..<250_000, using: &random))
            kill(writer.processIdentifier, SIGKILL)
            writer.waitUntilExit()
            // A start reads the ledger with the records of the intents not folded yet after it (the writer's held
            // refusals while the previous round's start held the lock): read first, so that a fold between the two
            // reads (a background fold of that start) moves them into the ledger, never out of sight.
            let pending = IntentJournal.pending(in: data.url.path(percentEncoded: false)).flatMap(\.records)
            let recorded = try FileConsentLedger(url: data.consentLedgerFile).load().records
            let last = (recorded + pending).last { $0.category == .analytics && $0.newStatus != .expired }
            let (privacy, consent) = launchGateAndConsent(on: data, policy: Self.policy)
            let status = await consent.status(for: .analytics)
            let expected = last?.newStatus ?? .unknown
            if status != expected || privacy.isEnabled(.analytics) != (expected == .granted) {
                disagreements.append("round \(round): ledger \(expected), start \(status)")
            }
        }
        #expect(disagreements.isEmpty, "seed \(seed): \(disagreements.count) of \(kills): \(disagreements)")
    }
}
#endif

import FeatureGate
import Foundation
import PackageTestSupport
import Testing

/// The checkpoint earns its trust: start-up takes it as far as its length and last bytes say, and shortly after, off
/// the caller's thread, the bytes it covers are checked against its digest; when they differ (or it has none), the
/// whole fold wins, with a diagnostic. The check writes nothing.
@Suite struct ConsentLedgerVerificationTests {
    /// How earlier bytes of the ledger are changed behind the checkpoint's back.
    enum Tampering: String, CaseIterable, Sendable {
        /// `"newStatus":"granted"` rewritten in place as `"newStatus": "denied"`: the same length.
        case grantRewrittenAsDenialInPlace
        /// One byte of the grant's line changed, so that the line no longer decodes.
        case byteCorrupted
    }

    /// A data directory whose ledger grants third-party sharing early, then holds enough later records that the
    /// grant is far outside the checkpoint's last bytes, and whose gate state has contacts decided on.
    struct Fixture {
        let directory = TemporaryDirectory()
        var files: PrivacyDataDirectory { PrivacyDataDirectory(url: directory.url) }
        var ledger: FileConsentLedger { FileConsentLedger(url: files.consentLedgerFile) }

        init() async throws {
            let (privacy, consent) = launch()
            try await consent.setStatus(.granted, for: .thirdPartySharing, source: .user)
            for index in 0..<12 {
                try await consent.setStatus(index % 2 == 0 ? .granted : .denied, for: .analytics, source: .user)
            }
            #expect(privacy.isEnabled(.contacts))
            #expect(await consent.waitForLedgerVerification().isEmpty)
            // The denials' records reach the ledger with the gate's flush (issue 47, item 1).
            #expect(await privacy.synchronize())
        }

        func launch(
            diagnostics: Collector<ConsentDiagnostic> = Collector()
        ) -> (PrivacyManager, ConsentManager) {
            let privacy = PrivacyManager(
                configuration: PrivacyConfiguration(enabledFeatures: []),
                store: FileFeatureStore(url: files.stateFile), consentPolicy: .default)
            let consent = ConsentManager(
                privacy: privacy, ledger: ledger, diagnosticHandler: { diagnostics.append($0) })
            return (privacy, consent)
        }

        /// Changes the ledger as `tampering` says, keeping its length and its last 256 bytes.
        func tamper(_ tampering: Tampering) throws {
            var bytes = try Data(contentsOf: files.consentLedgerFile)
            let text = String(decoding: bytes, as: UTF8.self)
            let grant = try #require(text.range(of: #""category":"thirdPartySharing""#))
            let offset = text.utf8.distance(from: text.startIndex, to: grant.lowerBound)
            #expect(offset + 1_000 < bytes.count, "the grant is near the checkpoint's point")
            switch tampering {
            case .grantRewrittenAsDenialInPlace:
                let lineEnd = try #require(text[grant.upperBound...].firstIndex(of: "\n"))
                let lineStart = text[..<grant.lowerBound].lastIndex(of: "\n").map { $0.utf16Offset(in: text) + 1 } ?? 0
                var line = String(text[text.index(text.startIndex, offsetBy: lineStart)..<lineEnd])
                let before = line.utf8.count
                line = line.replacingOccurrences(of: #""newStatus":"granted""#, with: #""newStatus": "denied""#)
                #expect(line.utf8.count == before && line.contains("denied"))
                bytes.replaceSubrange(lineStart..<(lineStart + before), with: Data(line.utf8))
            case .byteCorrupted:
                bytes[offset] = UInt8(ascii: "#")
            }
            try bytes.write(to: files.consentLedgerFile)
        }

        /// What folding the whole ledger gives, as a manager over an in-memory copy of it reads it.
        func wholeFold() throws -> ConsentManager {
            ConsentManager(
                privacy: PrivacyManager(
                    configuration: PrivacyConfiguration(enabledFeatures: []),
                    store: FileFeatureStore(url: files.stateFile), consentPolicy: .default),
                ledger: InMemoryConsentLedger(jsonLines: try Data(contentsOf: files.consentLedgerFile)))
        }
    }

    /// Waits, at most `seconds`, until `condition` holds, without calling into the check.
    static func eventually(within seconds: Double = 10, _ condition: () async -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return await condition()
    }

    @Test(arguments: Tampering.allCases)
    func anEarlierRecordChangedBehindTheCheckpointIsFoundAndTheWholeFoldWins(_ tampering: Tampering) async throws {
        let fixture = try await Fixture()
        defer { fixture.directory.cleanUp() }
        try fixture.tamper(tampering)
        let reference = try fixture.wholeFold()
        #expect(await reference.status(for: .thirdPartySharing) != .granted)
        let before = try ConsentLedgerCheckpointTests.contents(of: fixture.directory.url)

        let diagnostics = Collector<ConsentDiagnostic>()
        let (privacy, consent) = fixture.launch(diagnostics: diagnostics)
        // Within a bounded time, without anyone asking: the gate withdraws what the whole fold withdraws.
        #expect(await Self.eventually { !privacy.isEnabled(.contacts) }, "\(tampering): contacts stayed on")
        let found = await consent.waitForLedgerVerification()
        #expect(await consent.decisions == reference.decisions)
        #expect(!privacy.isEnabled(.contacts))
        #expect(found.contains { if case .ledgerCheckpointMismatch = $0 { true } else { false } })
        if tampering == .byteCorrupted {
            #expect(found.contains { if case .ledgerHasUnreadableEntries(_, 1) = $0 { true } else { false } })
        }
        #expect(diagnostics.all.map(\.description) == found.map(\.description))
        #expect(try ConsentLedgerCheckpointTests.contents(of: fixture.directory.url) == before, "the check wrote")

        // The next change writes a checkpoint whose digest is the file's: the launch after it holds.
        try await consent.setStatus(.denied, for: .advertising, source: .user)
        #expect(await privacy.synchronize())
        let (relaunchedPrivacy, relaunched) = fixture.launch()
        #expect(await relaunched.waitForLedgerVerification().isEmpty)
        // Statuses, not decisions: the record's time is kept to the millisecond.
        #expect(await relaunched.allStatuses == consent.allStatuses)
        #expect(relaunchedPrivacy.enabledFeatures == privacy.enabledFeatures)
    }

    /// Changes made at once after launch, while the check runs, are neither held up nor undone by it: the end state
    /// is the whole fold of the ledger as they left it.
    @Test func changesMadeWhileTheCheckRunsStandAfterIt() async throws {
        let fixture = try await Fixture()
        defer { fixture.directory.cleanUp() }
        try fixture.tamper(.grantRewrittenAsDenialInPlace)
        let (privacy, consent) = fixture.launch()
        for index in 0..<200 {
            let status: ConsentStatus = index % 2 == 0 ? .denied : .granted
            try await consent.setStatus(status, for: .analytics, source: .user)
            #expect(privacy.isEnabled(.analytics) == (status == .granted), "step \(index)")
        }
        await consent.waitForLedgerVerification()
        #expect(await privacy.synchronize())
        let reference = try fixture.wholeFold()
        #expect(await consent.allStatuses == reference.allStatuses)
        #expect(await consent.status(for: .analytics) == .granted)
        #expect(await consent.status(for: .thirdPartySharing) == .denied)
        #expect(!privacy.isEnabled(.contacts))
    }

    @Test func anUntouchedLedgerHoldsWithNoChangeAndNoDiagnostic() async throws {
        let fixture = try await Fixture()
        defer { fixture.directory.cleanUp() }
        let before = try ConsentLedgerCheckpointTests.contents(of: fixture.directory.url)
        let diagnostics = Collector<ConsentDiagnostic>()
        let (privacy, consent) = fixture.launch(diagnostics: diagnostics)
        let changes = Collector<ConsentChange>()
        let token = consent.observe { changes.append($0) }
        defer { token.cancel() }
        let decisions = await consent.decisions
        #expect(await consent.waitForLedgerVerification().isEmpty)
        #expect(await consent.decisions == decisions)
        #expect(await consent.status(for: .thirdPartySharing) == .granted)
        #expect(privacy.isEnabled(.contacts))
        #expect(changes.all.isEmpty && diagnostics.all.isEmpty)
        #expect(try ConsentLedgerCheckpointTests.contents(of: fixture.directory.url) == before)
    }

    @Test(arguments: [false, true])
    func aCheckpointWithoutDigestIsCheckedByTheWholeFold(tampered: Bool) async throws {
        let fixture = try await Fixture()
        defer { fixture.directory.cleanUp() }
        // As an earlier version wrote it: no digest.
        let checkpoint = fixture.ledger.checkpointURL
        let text = String(decoding: try Data(contentsOf: checkpoint), as: UTF8.self)
        let withoutDigest = text.replacing(try Regex(#""digest":"fnv1a64:[0-9a-f]{16}","#), with: "")
        #expect(withoutDigest.count == text.count - 36)
        try Data(withoutDigest.utf8).write(to: checkpoint)
        if tampered { try fixture.tamper(.grantRewrittenAsDenialInPlace) }
        let reference = try fixture.wholeFold()
        let before = try ConsentLedgerCheckpointTests.contents(of: fixture.directory.url)

        let (privacy, consent) = fixture.launch()
        let found = await consent.waitForLedgerVerification()
        #expect(await consent.decisions == reference.decisions)
        #expect(privacy.isEnabled(.contacts) == !tampered)
        #expect(found.map(\.description) == (tampered ? ["\(fixture.ledger): \(mismatchText)"] : []))
        #expect(try ConsentLedgerCheckpointTests.contents(of: fixture.directory.url) == before)
    }

    let mismatchText =
        "the consent ledger's checkpoint does not match the ledger; the whole ledger was folded and its statuses applied"

    @Test func theCheckpointsDigestFollowsEveryAppend() throws {
        let seed = ConsentLedgerCheckpointTests.seed()
        var random = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let files = PrivacyDataDirectory(url: directory.url)
        let ledger = FileConsentLedger(url: files.consentLedgerFile)
        for step in 0..<300 {
            let record = ConsentLedgerCheckpointTests.randomRecord(&random, index: step)
            if Int.random(in: 0..<4, using: &random) == 0 {
                // An earlier version's append, and now and then a torn line a crash left.
                var line = try ConsentLedgerCheckpointTests.line(record)
                if Bool.random(using: &random) { line = line.prefix(line.count / 2) }
                if FileManager.default.fileExists(atPath: files.consentLedgerFile.path(percentEncoded: false)) {
                    try ConsentLedgerCheckpointTests.appendRaw(line, to: files.consentLedgerFile)
                }
                continue
            }
            try ledger.append(record)
            let bytes = try Data(contentsOf: files.consentLedgerFile)
            let stored = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: ledger.checkpointURL)) as? [String: Any])
            let length = try #require(stored["ledgerLength"] as? Int)
            var digest = ConsentLedgerDigest()
            bytes.prefix(length).withUnsafeBytes { digest.add($0) }
            #expect(stored["digest"] as? String == "fnv1a64:" + hex(digest.value), "seed \(seed), step \(step)")
        }
    }

    private func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

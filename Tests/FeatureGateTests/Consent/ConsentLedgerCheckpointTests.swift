import FeatureGate
import Foundation
import PackageTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The checkpoint beside a file ledger: start-up folds it and the lines after it, never trusting it over the file,
/// and writes nothing; a running manager catches up with what other writers appended. A failure prints its seed:
/// `FEATUREGATE_SEED=N` replays it.
@Suite struct ConsentLedgerCheckpointTests {
    static func seed() -> UInt64 {
        ProcessInfo.processInfo.environment["FEATUREGATE_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 1...UInt64.max)
    }

    static let maps = ConsentCategory("maps")
    static let categories: [ConsentCategory] = [.analytics, .advertising, .thirdPartySharing, maps]

    /// A record of any category, status (`expired` included), source (outside ones and GPC included) and policy
    /// version, at a time with milliseconds.
    static func randomRecord(_ random: inout SeededGenerator, index: Int) -> ConsentRecord {
        ConsentRecord(
            category: categories.randomElement(using: &random)!,
            previousStatus: ConsentStatus.allCases.randomElement(using: &random)!,
            newStatus: ConsentStatus.allCases.randomElement(using: &random)!,
            time: Date(
                timeIntervalSince1970: 1_800_000_000 + Double(index) + Double(Int.random(in: 0..<1000, using: &random))
                    / 1000),
            policyVersion: Int.random(in: 1...3, using: &random),
            source: ConsentSource.allCases.randomElement(using: &random)!)
    }

    /// The line `FileConsentLedger` writes for `record`.
    static func line(_ record: ConsentRecord) throws -> Data {
        try InMemoryConsentLedger().appendAndExport(record)
    }

    /// Appends `bytes` to the file as a writer that knows nothing of the checkpoint would (an earlier version).
    static func appendRaw(_ bytes: Data, to url: URL) throws {
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: bytes)
    }

    /// Every entry of the directory at `url`, with the bytes of each regular file: what start-up must leave exactly
    /// as it was.
    static func contents(of url: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: url.path(percentEncoded: false)) {
            let entry = url.appending(path: name)
            let type = try FileManager.default.attributesOfItem(atPath: entry.path(percentEncoded: false))[.type]
            result[name] = type as? FileAttributeType == .typeRegular ? try Data(contentsOf: entry) : Data()
        }
        return result
    }

    @Test func theCheckpointAndTheLinesAfterItFoldAsTheWholeLedgerDoes() throws {
        let seed = Self.seed()
        var random = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let url = directory.url.appending(path: PrivacyDataDirectory.consentLedgerFileName)
        _ = FileManager.default.createFile(atPath: url.path(percentEncoded: false), contents: nil)
        let ledger = FileConsentLedger(url: url)
        var kept: ConsentLedgerSnapshot?
        var endsWithoutNewline = false
        var checks = 0
        for step in 0..<2_000 {
            let record = Self.randomRecord(&random, index: step)
            let roll = endsWithoutNewline ? 0 : Int.random(in: 0..<100, using: &random)
            switch roll {
            case 0..<8:
                // Through the ledger: the checkpoint follows, and the append says what others wrote since `kept`.
                let reading = try #require(try ledger.append(record, after: kept), "seed \(seed), step \(step)")
                if let kept {
                    var trail = kept.trail
                    trail.fold(try #require(reading.appended, "seed \(seed), step \(step): the append lost its place"))
                    trail.fold(
                        ConsentLedgerContents(records: [try #require(ConsentRecordLine.decode(Self.line(record)))]))
                    #expect(trail == reading.snapshot.trail, "seed \(seed), step \(step)")
                }
                kept = reading.snapshot
                endsWithoutNewline = false
            case 8..<82:
                try Self.appendRaw(Self.line(record), to: url)
            case 82..<90:
                let unreadable = Bool.random(using: &random) ? #"{"v":2,"category":"analytics"}"# : "not json at all"
                try Self.appendRaw(Data((unreadable + "\n").utf8), to: url)
            case 90..<95:
                // A torn last line: the start of a record, cut by a crash. Readers ignore it; the next append
                // removes it.
                let whole = try Self.line(record)
                try Self.appendRaw(whole.prefix(Int.random(in: 1..<(whole.count - 2), using: &random)), to: url)
                endsWithoutNewline = true
            default:
                // A last line without its newline that is whole: an entry (a record, or JSON this version cannot
                // decode); the next append ends it.
                let whole = try Self.line(record)
                try Self.appendRaw(
                    Bool.random(using: &random) ? whole.dropLast() : Data(#"{"from":"the future"}"#.utf8), to: url)
                endsWithoutNewline = true
            }
            // Checked now and then, more often when the ledger ends without a newline.
            guard Int.random(in: 0..<(endsWithoutNewline ? 10 : 80), using: &random) == 0 else { continue }
            checks += 1
            let whole = ConsentTrail(try ledger.load())
            let startUp = try ledger.readTrail(after: nil)
            #expect(startUp.snapshot.trail == whole, "seed \(seed), step \(step): start-up folded something else")
            let continued = try ledger.readTrail(after: kept)
            #expect(continued.snapshot.trail == whole, "seed \(seed), step \(step): the continued read differs")
            if let kept {
                var trail = kept.trail
                trail.fold(try #require(continued.appended, "seed \(seed), step \(step): the read lost its place"))
                #expect(trail == whole, "seed \(seed), step \(step): the appended entries fold to something else")
            }
            kept = continued.snapshot
        }
        #expect(checks > 20)
        let contents = try ledger.load()
        #expect(contents.records.count > 1_300 && contents.unreadableEntries > 60, "seed \(seed)")
        #expect(
            ConsentTrail(contents).answers.values.contains { !$0.isTrusted },
            "seed \(seed): the unreadable entries untrust the grants")
    }

    @Test func anInMemoryLedgerContinuesItsSnapshotsToo() throws {
        let seed = Self.seed()
        var random = SeededGenerator(seed: seed)
        let ledger = InMemoryConsentLedger(jsonLines: Data("{\"v\":9}\n".utf8))
        var snapshots: [ConsentLedgerSnapshot] = [try ledger.readTrail(after: nil).snapshot]
        for step in 0..<2_000 {
            let record = Self.randomRecord(&random, index: step)
            let from = snapshots.randomElement(using: &random)!
            let reading = try #require(try ledger.append(record, after: from))
            var trail = from.trail
            trail.fold(try #require(reading.appended, "seed \(seed), step \(step)"))
            trail.fold(ConsentLedgerContents(records: [try #require(ConsentRecordLine.decode(Self.line(record)))]))
            #expect(trail == reading.snapshot.trail, "seed \(seed), step \(step)")
            snapshots.append(reading.snapshot)
            if snapshots.count > 20 { snapshots.removeFirst() }
        }
        #expect(try ledger.readTrail(after: nil).snapshot.trail == ConsentTrail(try ledger.load()))
        #expect(
            try ledger.readTrail(after: ConsentLedgerSnapshot(trail: ConsentTrail(ConsentLedgerContents(records: []))))
                .appended == nil)
    }

    /// The ways a checkpoint can stop describing its ledger.
    enum Distrust: String, CaseIterable, Sendable {
        case missing, notJSON, newerFormat, fingerprintOfTheWrongLength, ledgerCutShorterThanItsPoint
        case ledgerRewrittenBeforeItsPoint, ledgerReplaced, symbolicLink, fifo, tooLarge
    }

    @Test(arguments: Distrust.allCases)
    func aCheckpointTheLedgerDoesNotContinueIsNeverTrusted(_ distrust: Distrust) async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let files = PrivacyDataDirectory(url: directory.url)
        let ledger = FileConsentLedger(url: files.consentLedgerFile)
        #expect(
            ledger.checkpointURL == directory.url.appending(path: PrivacyDataDirectory.consentLedgerCheckpointFileName))
        let time = Date(timeIntervalSince1970: 1_800_000_000.25)
        for (index, category) in [ConsentCategory.advertising, .thirdPartySharing, .analytics].enumerated() {
            try ledger.append(
                ConsentRecord(
                    category: category, previousStatus: .unknown, newStatus: index == 2 ? .denied : .granted,
                    time: time.addingTimeInterval(Double(index)), policyVersion: 1, source: .user))
        }
        // A checkpoint that lies (analytics granted, where the ledger says denied) at a point the ledger continues is
        // believed: that is how start-up knows it reads the checkpoint and not the file.
        let checkpoint = ledger.checkpointURL
        var stored = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: checkpoint)) as? [String: Any])
        var answers = try #require(stored["answers"] as? [[String: Any]])
        let analytics = try #require(answers.firstIndex { $0["category"] as? String == "analytics" })
        answers[analytics]["status"] = "granted"
        stored["answers"] = answers
        func write(_ stored: [String: Any], padding: Int = 0) throws {
            var data = try JSONSerialization.data(withJSONObject: stored)
            data.append(Data(repeating: UInt8(ascii: " "), count: padding))
            try data.write(to: checkpoint)
        }
        try write(stored)
        #expect(try ledger.readTrail(after: nil).snapshot.trail.answers[.analytics]?.status == .granted)

        let checkpointPath = checkpoint.path(percentEncoded: false)
        switch distrust {
        case .missing: try FileManager.default.removeItem(at: checkpoint)
        case .notJSON: try Data("{\"v\":1,".utf8).write(to: checkpoint)
        case .newerFormat:
            stored["v"] = 2
            try write(stored)
        case .fingerprintOfTheWrongLength:
            stored["fingerprint"] = Data("x".utf8).base64EncodedString()
            try write(stored)
        case .ledgerCutShorterThanItsPoint:
            let bytes = try Data(contentsOf: files.consentLedgerFile)
            let lastLine = try #require(bytes.dropLast().lastIndex(of: UInt8(ascii: "\n")))
            try bytes.prefix(through: lastLine).write(to: files.consentLedgerFile)
        case .ledgerRewrittenBeforeItsPoint:
            // Same length, one digit of the last record's time changed.
            var text = try String(contentsOf: files.consentLedgerFile, encoding: .utf8)
            let range = try #require(text.range(of: ".250Z", options: .backwards))
            text.replaceSubrange(range, with: ".251Z")
            try Data(text.utf8).write(to: files.consentLedgerFile)
        case .ledgerReplaced:
            let other = InMemoryConsentLedger()
            for index in 0..<5 {
                try other.append(
                    ConsentRecord(
                        category: .analytics, previousStatus: .unknown, newStatus: .restricted,
                        time: time.addingTimeInterval(Double(100 + index)), policyVersion: 1, source: .cmp))
            }
            try other.exportJSONLines().write(to: files.consentLedgerFile)
        case .symbolicLink:
            let target = directory.url.appending(path: "elsewhere.json")
            try FileManager.default.moveItem(at: checkpoint, to: target)
            try FileManager.default.createSymbolicLink(
                atPath: checkpointPath, withDestinationPath: target.path(percentEncoded: false))
        case .fifo:
            try FileManager.default.removeItem(at: checkpoint)
            #expect(mkfifo(checkpointPath, 0o600) == 0)
        case .tooLarge:
            try write(stored, padding: 1024 * 1024)
        }
        let reading = try ledger.readTrail(after: nil)
        let whole = ConsentTrail(try ledger.load())
        #expect(reading.snapshot.trail == whole)
        #expect(reading.snapshot.trail.answers[.analytics]?.status != .granted)
        // A manager starting over it reads the same, and writes nothing.
        let before = try Self.contents(of: directory.url)
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: files.stateFile))
        let consent = ConsentManager(privacy: privacy, ledger: ledger)
        let expected: ConsentStatus =
            switch distrust {
            case .ledgerReplaced: .restricted
            case .ledgerCutShorterThanItsPoint: .unknown
            default: .denied
            }
        #expect(await consent.status(for: .analytics) == expected)
        #expect(try Self.contents(of: directory.url) == before)
    }

    @Test func aLedgerWrittenBeforeCheckpointsStartsWithoutWritingAndGainsOneAtTheNextChange() async throws {
        let seed = Self.seed()
        var random = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let files = PrivacyDataDirectory(url: directory.url)
        // As earlier versions left it: JSON Lines, no checkpoint.
        var lines = Data()
        for index in 0..<1_500 { lines.append(try Self.line(Self.randomRecord(&random, index: index))) }
        try lines.write(to: files.consentLedgerFile)
        let reference = ConsentManager(
            privacy: PrivacyManager(
                configuration: PrivacyConfiguration(enabledFeatures: []), store: InMemoryFeatureStore()),
            ledger: InMemoryConsentLedger(jsonLines: lines), now: { Date(timeIntervalSince1970: 1_800_000_000) })

        func launch() -> (PrivacyManager, ConsentManager) {
            let privacy = PrivacyManager(
                configuration: PrivacyConfiguration(enabledFeatures: []), store: FileFeatureStore(url: files.stateFile))
            let consent = ConsentManager(
                privacy: privacy, ledger: FileConsentLedger(url: files.consentLedgerFile),
                now: { Date(timeIntervalSince1970: 1_800_000_000) })
            return (privacy, consent)
        }
        let before = try Self.contents(of: directory.url)
        let (firstGate, first) = launch()
        #expect(await first.decisions == reference.decisions, "seed \(seed)")
        #expect(try Self.contents(of: directory.url) == before, "start-up wrote something")
        #expect(
            !FileManager.default.fileExists(
                atPath: files.url.appending(path: PrivacyDataDirectory.consentLedgerCheckpointFileName).path(
                    percentEncoded: false)))

        // The first change writes the checkpoint; a relaunch reads it and the lines an older writer added after it.
        // A category the random records never name, so the denial is a change whatever the seed.
        let personalization = ConsentCategory("personalization")
        let change = try #require(try await first.setStatus(.denied, for: personalization, source: .user))
        // A refusal's record reaches the ledger with the gate's flush, off the caller's thread (issue 47, item 1).
        #expect(await firstGate.synchronize())
        #expect(
            FileManager.default.fileExists(
                atPath: FileConsentLedger(url: files.consentLedgerFile).checkpointURL.path(percentEncoded: false)))
        let late = Self.randomRecord(&random, index: 2_000)
        try Self.appendRaw(Self.line(late), to: files.consentLedgerFile)
        let relaunched = try Self.contents(of: directory.url)
        let (_, second) = launch()
        // The late line is a change the gate state does not reflect: the start replays it into the gate state (a
        // committed change completed), and writes nothing else.
        let state = PrivacyDataDirectory.stateFileName
        #expect(
            try Self.contents(of: directory.url).filter { $0.key != state } == relaunched.filter { $0.key != state },
            "start-up wrote something besides the replayed gate state")
        let ledger = FileConsentLedger(url: files.consentLedgerFile)
        #expect(try ledger.readTrail(after: nil).snapshot.trail == ConsentTrail(try ledger.load()), "seed \(seed)")
        #expect(await second.status(for: personalization) == .denied)

        // Export and records() still return every record, oldest first.
        let exported = String(decoding: try await second.exportAuditTrail(), as: UTF8.self).split(separator: "\n")
        #expect(exported.count == 1_502)
        let records = try await second.records()
        #expect(records.count == 1_502)
        #expect(records[1_500].category == change.category && records[1_500].newStatus == .denied)
        #expect(records.last == ConsentRecordLine.decode(try Self.line(late)))
    }

    @Test func twoManagersOnOneDataDirectoryCatchUpWithEachOther() async throws {
        let seed = Self.seed()
        var random = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let files = PrivacyDataDirectory(url: directory.url)
        let policy = ConsentPolicy.default
        struct Side {
            let privacy: PrivacyManager
            let consent: ConsentManager
            let observed: Collector<ConsentChange>
            let token: ObservationToken
        }
        func launch() -> Side {
            let privacy = PrivacyManager(
                configuration: PrivacyConfiguration(enabledFeatures: .all),
                store: FileFeatureStore(url: files.stateFile),
                consentPolicy: policy)
            let consent = ConsentManager(privacy: privacy, ledger: FileConsentLedger(url: files.consentLedgerFile))
            let observed = Collector<ConsentChange>()
            return Side(
                privacy: privacy, consent: consent, observed: observed, token: consent.observe { observed.append($0) })
        }
        let sides = [launch(), launch()]
        let categories = [ConsentCategory.analytics, .advertising, .thirdPartySharing]
        var delivered = 0
        for step in 0..<1_000 {
            let writer = Int.random(in: 0..<2, using: &random)
            let (from, to) = (sides[writer], sides[1 - writer])
            let seen = from.observed.all.count
            let category = categories.randomElement(using: &random)!
            let status = [ConsentStatus.granted, .denied, .restricted, .unknown].randomElement(using: &random)!
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6: _ = try? await from.consent.setStatus(status, for: category, source: .user)
            case 6..<9: _ = try? await from.consent.applyAnswer(status, for: category, source: .cmp)
            default: _ = try? await from.consent.applyGlobalPrivacyControl(Bool.random(using: &random))
            }
            let made = from.observed.all[seen...].map { [$0.category.rawValue, "\($0.current)", "\($0.source)"] }
            let caught = await to.consent.catchUpWithLedger()
            delivered += caught.count
            #expect(
                caught.map { [$0.category.rawValue, "\($0.current)", "\($0.source)"] } == made,
                "seed \(seed), step \(step): the other manager delivered something else")
            #expect(to.observed.all.suffix(caught.count) == caught[...], "seed \(seed), step \(step)")
            #expect(await to.consent.allStatuses == from.consent.allStatuses, "seed \(seed), step \(step)")
            #expect(to.privacy.enabledFeatures == from.privacy.enabledFeatures, "seed \(seed), step \(step)")
        }
        #expect(delivered > 250, "seed \(seed)")
        // What both hold is what a relaunch reads.
        let relaunched = launch()
        #expect(await relaunched.consent.allStatuses == sides[0].consent.allStatuses, "seed \(seed)")
        #expect(relaunched.privacy.enabledFeatures == sides[0].privacy.enabledFeatures, "seed \(seed)")
    }

    @Test func aManagerWhoseLedgerWasRewrittenFoldsItAgainAndKeepsTheGatesRefusals() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let files = PrivacyDataDirectory(url: directory.url)
        let privacy = PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: .all), store: FileFeatureStore(url: files.stateFile),
            consentPolicy: .default)
        let consent = ConsentManager(privacy: privacy, ledger: FileConsentLedger(url: files.consentLedgerFile))
        try await consent.setStatus(.granted, for: .analytics, source: .user)
        try await consent.setStatus(.denied, for: .advertising, source: .user)
        #expect(await consent.catchUpWithLedger().isEmpty)
        // Another ledger replaces the file (a restored backup, say): it grants advertising and lacks analytics.
        let other = InMemoryConsentLedger()
        try other.append(
            ConsentRecord(
                category: .advertising, previousStatus: .unknown, newStatus: .granted, time: Date(), policyVersion: 1,
                source: .user))
        try other.exportJSONLines().write(to: files.consentLedgerFile)
        let changes = await consent.catchUpWithLedger()
        #expect(changes.map(\.category) == [.analytics])
        #expect(await consent.status(for: .analytics) == .unknown)
        // The refusal the gate state keeps holds, as it would after a relaunch.
        #expect(await consent.status(for: .advertising) == .denied)
        #expect(!privacy.isEnabled(.analytics))
    }

    /// What a manager catches up with was saved into the gate state by the process that recorded it. Saving it again
    /// from here, late, would undo what that process saved since (here: a refusal made after the grant caught up).
    @Test func catchingUpSavesNothingIntoTheGateState() async throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let files = PrivacyDataDirectory(url: directory.url)
        func launch() -> ConsentManager {
            let privacy = PrivacyManager(
                configuration: PrivacyConfiguration(enabledFeatures: .all),
                store: FileFeatureStore(url: files.stateFile), consentPolicy: .default)
            return ConsentManager(privacy: privacy, ledger: FileConsentLedger(url: files.consentLedgerFile))
        }
        let app = launch()
        let extensionProcess = launch()
        try await extensionProcess.setStatus(.denied, for: .analytics, source: .user)
        try await extensionProcess.setStatus(.granted, for: .analytics, source: .user)
        // The extension's state after a later refusal whose record the app has not read yet.
        let newer = FeatureStateRecord(
            enabledFeatures: [], decidedFeatures: .analytics, deniedConsentCategories: [.analytics])
        try FileFeatureStore(url: files.stateFile).save(newer.encoded())
        let caught = await app.catchUpWithLedger()
        #expect(caught.map(\.current) == [.denied, .granted])
        #expect(app.privacy.isEnabled(.analytics))
        let stored = try FeatureStateRecord(decoding: try #require(try FileFeatureStore(url: files.stateFile).load()))
        #expect(stored == newer, "catching up wrote into the gate state")
    }
}

extension InMemoryConsentLedger {
    /// Appends `record` and returns the whole trail's JSON Lines (for a fresh ledger: the record's line).
    fileprivate func appendAndExport(_ record: ConsentRecord) throws -> Data {
        try append(record)
        return try exportJSONLines()
    }
}

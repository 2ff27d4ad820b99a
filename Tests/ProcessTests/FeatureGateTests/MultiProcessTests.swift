#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Real child processes (`feature-store-writer share`) on one data directory, each with a catalog and a policy of
/// its own, appending to the ledger and saving the gate state at the same time; some killed with SIGKILL at random
/// moments. A failure prints its seed: `FEATUREGATE_SEED=N` replays it.
@Suite struct MultiProcessTests {
    /// One child: its tag (which owns flag bits 16 + 4 TAG ... and categories `pTAGcK`) and what it printed.
    struct Child {
        let tag: Int
        let process: Process
        let log: URL

        init(directory: URL, logs: URL, tag: Int, seed: UInt64, operations: Int, base: Int) throws {
            self.tag = tag
            log = logs.appending(path: "child-\(tag)-\(seed).log")
            _ = FileManager.default.createFile(atPath: log.path(percentEncoded: false), contents: nil)
            process = Process()
            process.executableURL = try builtProduct("feature-store-writer")
            process.arguments = [
                "share", directory.path(percentEncoded: false), String(tag), String(seed), String(operations),
                String(base),
            ]
            process.standardOutput = try FileHandle(forWritingTo: log)
            try process.run()
        }

        /// The operations it started, each with whether it acknowledged it (`ok`), and whether it printed `done`.
        func steps() -> (steps: [(operation: [Substring], acknowledged: Bool)], done: Bool) {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            var steps: [(operation: [Substring], acknowledged: Bool)] = []
            var done = false
            // A line the kill cut short has no newline: it is not a line yet.
            let complete =
                text.hasSuffix("\n") ? Substring(text) : text[..<(text.lastIndex(of: "\n") ?? text.startIndex)]
            for line in complete.split(separator: "\n") {
                if line == "ok" {
                    steps[steps.count - 1].acknowledged = true
                } else if line == "done" {
                    done = true
                } else {
                    steps.append((line.split(separator: " "), false))
                }
            }
            return (steps, done)
        }
    }

    /// What the files must hold for one child, built from its acknowledged operations; an operation in flight when
    /// it was killed may have happened or not.
    struct Expectation {
        var flags: UInt = 0
        var flagsInFlight: UInt?
        var statuses: [Int: ConsentStatus] = [:]
        var statusesInFlight: [Int: ConsentStatus] = [:]
        var appended: Set<Int> = []
        var appendInFlight: Int?
        /// Consent records per category, in order, when nothing was in flight.
        var records: [Int: [ConsentStatus]] = [:]
        /// Categories whose last change was in flight when the process was killed, and not changed since: the
        /// ledger may hold it and the gate state not.
        var unsettled: Set<Int> = []

        mutating func apply(_ steps: [(operation: [Substring], acknowledged: Bool)]) {
            for (operation, acknowledged) in steps {
                switch operation[0] {
                case "flags":
                    let bits = UInt(operation[1])!
                    if acknowledged { flags = bits } else { flagsInFlight = bits }
                case "consent":
                    let category = Int(operation[1])!
                    let status: ConsentStatus = operation[2] == "granted" ? .granted : .denied
                    if acknowledged {
                        if statuses[category, default: .unknown] != status {
                            records[category, default: []].append(status)
                            unsettled.remove(category)
                        }
                        statuses[category] = status
                    } else {
                        statusesInFlight[category] = status
                        unsettled.insert(category)
                    }
                default:
                    let id = Int(operation[1])!
                    if acknowledged { appended.insert(id) } else { appendInFlight = id }
                }
            }
        }
    }

    static func seed() -> UInt64 {
        ProcessInfo.processInfo.environment["FEATUREGATE_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 1...UInt64.max)
    }

    static func ownFlags(_ bits: UInt, tag: Int) -> Feature { Feature(rawValue: bits << (16 + 4 * tag)) }

    static func category(_ index: Int, tag: Int) -> ConsentCategory { ConsentCategory("p\(tag)c\(index)") }

    @Test func processesSharingADirectoryLoseNoRecordDecisionOrRefusal() throws {
        let seed = Self.seed()
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let operations = 1_000
        let children = try (0..<3).map { tag in
            try Child(
                directory: data.url, logs: directory.url, tag: tag, seed: seed &+ UInt64(tag), operations: operations,
                base: (tag + 1) * 1_000_000)
        }
        for child in children { child.process.waitUntilExit() }

        let ledger = try FileConsentLedger(url: data.consentLedgerFile).load()
        let record = try FeatureStateRecord(decoding: try #require(try FileFeatureStore(url: data.stateFile).load()))
        var appendedTotal = 0
        var recordsTotal = 0
        for child in children {
            #expect(child.process.terminationStatus == 0, "seed \(seed), child \(child.tag)")
            let (steps, done) = child.steps()
            #expect(done && steps.count == operations && steps.allSatisfy(\.acknowledged), "seed \(seed)")
            var expected = Expectation()
            expected.apply(steps)
            appendedTotal += expected.appended.count
            // Every record appended directly, once each.
            let ids = ledger.records.map(\.policyVersion).filter { $0 / 1_000_000 == child.tag + 1 }
            #expect(ids.sorted() == expected.appended.sorted(), "seed \(seed), child \(child.tag)")
            // Every consent change, in order; the last of each category decides the stored refusal.
            for index in 0..<4 {
                let category = Self.category(index, tag: child.tag)
                let trail = ledger.records.filter { $0.category == category }.map(\.newStatus)
                #expect(trail == expected.records[index, default: []], "seed \(seed), \(category)")
                recordsTotal += trail.count
                let refused = expected.statuses[index] == .denied
                #expect(record.deniedConsentCategories.contains(category) == refused, "seed \(seed), \(category)")
            }
            // The last decision on each of its flags, which no other process's catalog knows.
            let mask = Self.ownFlags(0xF, tag: child.tag)
            #expect(
                record.enabledFeatures.intersection(mask) == Self.ownFlags(expected.flags, tag: child.tag),
                "seed \(seed), child \(child.tag)")
        }
        #expect(ledger.unreadableEntries == 0, "seed \(seed)")
        #expect(ledger.records.count == appendedTotal + recordsTotal, "seed \(seed)")
        #expect(appendedTotal > 500 && recordsTotal > 100, "seed \(seed): too few operations to prove anything")
    }

    @Test func processesKilledAtRandomMomentsLeaveReadableFilesWithEveryAcknowledgedChange() throws {
        let seed = Self.seed()
        var random = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let data = PrivacyDataDirectory(url: directory.url.appending(path: "data"))
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        var expected = [Expectation(), Expectation()]
        var appendedSoFar: Set<Int> = []
        for round in 0..<10 {
            let children = try (0..<2).map { tag in
                try Child(
                    directory: data.url, logs: directory.url, tag: tag, seed: random.next(), operations: 1_000_000,
                    base: 1_000 + round * 100_000 + tag * 10_000)
            }
            for child in children {
                // Kill each at its own random moment, once it has started working.
                usleep(UInt32.random(in: 20_000...150_000, using: &random))
                kill(child.process.processIdentifier, SIGKILL)
                child.process.waitUntilExit()
                #expect(child.process.terminationReason == .uncaughtSignal, "seed \(seed), round \(round)")
            }
            // A disable returns once its pending change is written (its flush follows off the caller's thread), so a
            // child killed right after leaves it as an intent: the files hold it as every start reads them, with the
            // intents folded in, as the lock's next holder folds them.
            _ = AtomicFile.withLock(of: data.stateFile, waitingAtMost: .seconds(5)) {}
            let ledger = try FileConsentLedger(url: data.consentLedgerFile).load()
            let stored =
                try FileFeatureStore(url: data.stateFile).load().map { try FeatureStateRecord(decoding: $0) }
                ?? FeatureStateRecord(enabledFeatures: [], decidedFeatures: [])
            #expect(ledger.unreadableEntries == 0, "seed \(seed), round \(round)")
            // The ledger is the commit point: a record after the point the gate state reflects (a change cut short
            // after its record) is what the next start applies, whatever refusal the state kept from before it.
            let ledgerBytes = (try? Data(contentsOf: data.consentLedgerFile)) ?? Data()
            let point = min(stored.ledgerLength ?? ledgerBytes.count, ledgerBytes.count)
            let replayed = Set(
                ledgerBytes[(ledgerBytes.startIndex + point)...].split(separator: UInt8(ascii: "\n"))
                    .compactMap { ConsentRecordLine.decode(Data($0)) }.map(\.category))
            let ids = Set(ledger.records.map(\.policyVersion))
            for (tag, child) in children.enumerated() {
                var expectation = expected[tag]
                expectation.flagsInFlight = nil
                expectation.statusesInFlight = [:]
                expectation.appendInFlight = nil
                expectation.apply(child.steps().steps)
                let context = "seed \(seed), round \(round), child \(tag)"
                #expect(expectation.appended.isSubset(of: ids), "\(context): an acknowledged record is lost")
                appendedSoFar.formUnion(expectation.appended)
                if let id = expectation.appendInFlight, ids.contains(id) {
                    expectation.appended.insert(id)
                    appendedSoFar.insert(id)
                }
                let flags = stored.enabledFeatures.intersection(Self.ownFlags(0xF, tag: tag)).rawValue >> (16 + 4 * tag)
                let allowed = [expectation.flags] + (expectation.flagsInFlight.map { [$0] } ?? [])
                #expect(allowed.contains(flags), "\(context): flags \(flags), expected one of \(allowed)")
                expectation.flags = flags
                for index in 0..<4 {
                    let category = Self.category(index, tag: tag)
                    let last = ledger.records.last { $0.category == category }?.newStatus ?? .unknown
                    let refused = stored.deniedConsentCategories.contains(category)
                    // A refusal in either the ledger or the gate state holds, unless the ledger recorded a change
                    // after the point the state reflects.
                    let status = refused && !replayed.contains(category) ? .denied : last
                    var allowed = [expectation.statuses[index, default: .unknown]]
                    if let inFlight = expectation.statusesInFlight[index] { allowed.append(inFlight) }
                    #expect(
                        allowed.contains(status), "\(context): \(category) is \(status), expected one of \(allowed)")
                    if !expectation.unsettled.contains(index) {
                        // Acknowledged: the ledger and the gate state both hold it. (A change cut short may be in
                        // the ledger only: a denial there holds all the same.)
                        #expect(
                            replayed.contains(category) || refused == (last == .denied),
                            "\(context): \(category) refusal lost or invented")
                    }
                    expectation.statuses[index] = status
                }
                expected[tag] = expectation
            }
            // Nothing appended that no child started.
            #expect(ids.subtracting(appendedSoFar).allSatisfy { $0 < 1_000 }, "seed \(seed), round \(round)")
        }
        // The files the kills left still take appends and saves, and read whole.
        let ledger = FileConsentLedger(url: data.consentLedgerFile)
        try ledger.append(record(.analytics, .unknown, .denied))
        let contents = try ledger.load()
        #expect(contents.unreadableEntries == 0 && contents.records.last?.newStatus == .denied, "seed \(seed)")
        #expect(try ledger.exportJSONLines().split(separator: UInt8(ascii: "\n")).count == contents.records.count)
    }
}
#endif

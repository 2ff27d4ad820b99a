#if os(macOS) || os(Linux)
import FeatureGate
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct ConsentLedgerTests {
    @Test func aFileLedgerCreatesNothingUntilTheFirstAppend() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let ledger = FileConsentLedger(url: directory.url.appending(path: "consent/ledger.jsonl"))
        #expect(try ledger.load() == ConsentLedgerContents(records: []))
        #expect(try ledger.exportJSONLines().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test func recordsRoundTripAndExportAsJSONLines() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let ledger = FileConsentLedger(url: directory.url.appending(path: "ledger.jsonl"))
        let first = record(.analytics, .unknown, .granted)
        let second = record(.advertising, .unknown, .restricted, version: 3, source: .att)
        try ledger.append(first)
        try ledger.append(second)
        #expect(try ledger.load().records == [first, second])
        let lines = String(decoding: try ledger.exportJSONLines(), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(
            lines[1]
                == #"{"category":"advertising","newStatus":"restricted","policyVersion":3,"previousStatus":"unknown","source":"att","time":"2027-01-15T08:00:00.125Z","v":1}"#
        )
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["v"] as? Int == 1)
        }
    }

    @Test func entriesItCannotDecodeAreCountedKeptAndExported() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let url = directory.url.appending(path: "ledger.jsonl")
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try Data("{\"from\":\"the future\"}".utf8).write(to: url)  // no trailing newline
        let ledger = FileConsentLedger(url: url)
        try ledger.append(record(.analytics, .unknown, .denied))
        let contents = try ledger.load()
        #expect(contents.records == [record(.analytics, .unknown, .denied)])
        #expect(contents.unreadableEntries == 1)
        #expect(String(decoding: try ledger.exportJSONLines(), as: UTF8.self).hasPrefix("{\"from\":\"the future\"}\n{"))
    }

    @Test func aLedgerSurvivesAWriterKilledAtAnyMoment() throws {
        let directory = TemporaryDirectory()
        defer { directory.cleanUp() }
        let url = directory.url.appending(path: "consent/ledger.jsonl")
        let ledger = FileConsentLedger(url: url)
        var previousCount = 0
        for round in 0..<10 {
            let child = try startFixture(mode: "ledger", path: url.path(percentEncoded: false))
            usleep(UInt32(3_000 + round * 4_000))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            let contents = try ledger.load()
            #expect(contents.unreadableEntries == 0)
            #expect(contents.records.count > previousCount)
            previousCount = contents.records.count
        }
    }
}
#endif

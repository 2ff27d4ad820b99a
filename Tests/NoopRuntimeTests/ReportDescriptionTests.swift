import FeatureGate
import NoopRuntime
import Testing

/// What the report types print: sentences a user can read, not type names.
@Suite struct ReportDescriptionTests {
    @Test func aFlushReportSaysWhatHappenedInWords() {
        #expect(
            String(describing: FlushReport(outcome: .purged, purgedEvents: 5))
                == "purged 5 queued events: the gate was closed, nothing was delivered")
        #expect(
            String(describing: FlushReport(outcome: .alreadyFlushing))
                == "nothing done: another flush was under way")
        #expect(String(describing: FlushReport(outcome: .flushed)) == "flushed: nothing was queued")
        #expect(String(describing: FlushReport.Outcome.purged) == "purged")
        #expect(!String(describing: FlushReport(outcome: .purged)).contains("NoopRuntime"))
    }

    @Test func aFlushThroughABufferNamesEachBackendAndItsEvents() async throws {
        let privacy = gate(.analytics)
        let backend = ScriptedBackend("upload")
        let buffer = GatedEventBuffer<Int>(
            features: .analytics, capacity: 10, privacy: privacy, backends: [backend], counter: IOCounter())
        try buffer.track(1)
        try buffer.track(2)
        let report = await buffer.flush()
        #expect(String(describing: report) == "flushed: upload delivered 2 events")
    }

    @Test func ioCountsSayWhichNumberIsAllowedAndWhichRefused() {
        var counts = IOCounts()
        #expect(counts.description == "nothing")
        counts[.storage, .allowed] = 2
        counts[.event, .refused] = 1
        counts[.transport, .allowed] = 1
        counts[.transport, .refused] = 3
        #expect(counts.description == "storage: 2 allowed; transport: 1 allowed, 3 refused; event: 1 refused")
    }

    @Test func aRevocationReportListsStopsAndPurgesPerSubsystem() {
        var report = RevocationReport(
            disabledFeatures: .analytics,
            purges: [SubsystemPurge(subsystem: "analytics", report: PurgeReport(removedFiles: ["queue.jsonl"]))])
        report.stoppedSubsystems = ["analytics"]
        let lines = String(describing: report).split(separator: "\n")
        #expect(lines.contains("stopped: analytics"))
        #expect(lines.contains("purged analytics: 1 file, 0 items, 0 identifiers"))
        #expect(lines.contains { $0.hasPrefix("erasure request: ") })
    }
}

// consent-demo: a small SDK whose subsystems (push, analytics, message center, contacts) do real file and
// loopback-HTTP I/O, driven through a consent flow (consent categories, App Tracking Transparency, revoke-all)
// by FeatureGate and NoopRuntime. With every feature off it stores nothing and opens no socket;
// scripts/verify-silence.sh proves it with strace.
import FeatureGate
import FeatureGateConfig
import FeatureGateRemote
import Foundation
import NoopRuntime

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The demo's entry point is one async `main()`, not top-level code in main.swift. As top-level code,
// `swift build -c release` crashed Swift 6.3.1 every time (signal 6 in the CopyPropagation pass on `@async_Main`; the
// ownership verifier: "Found outside of lifetime use?!", a `load_borrow` of the global tuple `config` whose
// `end_borrow` came before the `debug_value` of the iterator of `for note in config.notes`). Reading the config
// through a function (no `do`/`catch` around the global's initialization) did not help; locals instead of globals
// did. The case, reduced for a compiler bug report (`swiftc -O -g`, top-level code; the tuple's first two types come
// from another module of this package: a one-file copy with types of its own compiles):
//
//     import FeatureGate
//     import FeatureGateConfig
//     let config: (configuration: PrivacyConfiguration, policy: ConsentPolicy, notes: [String]) = read()
//     let sdk = DemoSDK(configuration: config.configuration, policy: config.policy)
//     for note in config.notes { print(note) }
//     await sdk.runtime.settle()   // any top-level `await` makes the entry point `@async_Main`

/// Runs the demo: parses the options, reads the config, runs the steps, prints what happened.
@main
enum ConsentDemo {
    static func main() async {
        signal(SIGPIPE, SIG_IGN)

        let options: DemoOptions
        do {
            options = try DemoOptions(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            let message = String(describing: error)
            FileHandle.standardError.write(
                Data(((message.isEmpty ? "" : "consent-demo: \(message)\n\n") + DemoOptions.usage + "\n").utf8))
            exit(message.isEmpty ? 0 : 64)
        }

        let config = readDemoConfigOrExit(at: options.configPath)

        let isTemporaryDirectory = options.dataDirectory == nil
        let dataDirectory =
            options.dataDirectory
            ?? URL(filePath: NSTemporaryDirectory(), directoryHint: .isDirectory)
            .appending(path: "consent-demo-\(UUID().uuidString.lowercased())", directoryHint: .isDirectory)
        let dataPath = dataDirectory.path(percentEncoded: false)

        /// The demo's clock: the real time, moved on by `advance:` steps so answers can be seen to expire.
        let clock = LockedValue(Date())
        if let count = options.readmeEvents {
            await runReadmeWiring(
                configuration: config.configuration, policy: config.policy, dataDirectory: dataDirectory, events: count)
            return
        }
        let sdk = DemoSDK(
            dataDirectory: dataDirectory, configuration: config.configuration, policy: config.policy,
            region: options.region,
            clock: clock, slowCollector: options.slowCollector)
        for note in config.notes { print("consent-demo: \(note)") }
        if !sdk.heldOffByConsent.isEmpty {
            print("consent-demo: \(sdk.heldOffByConsent) held off: their consent categories are not granted")
        }
        print("data dir: \(dataPath)\(isTemporaryDirectory ? " (temporary)" : "")")

        if options.holdUndecided { await sdk.holdUndecidedAnalytics() }
        sdk.runtime.start()
        // An app calls `refresher.refreshIfDue()` whenever it comes to the foreground; the demo does it at each `remote`
        // step only, so the collector's scripted answers (disable push, then lift it) line up with the steps.
        await sdk.runtime.settle()

        var shownRequests = 0
        var shownEvents: UInt64 = 0

        /// The files under the data directory, relative and sorted, with their sizes; `nil` when it does not exist.
        func dataFiles() -> [(path: String, size: Int)]? {
            guard FileManager.default.fileExists(atPath: dataPath) else { return nil }
            let files = (try? FileManager.default.subpathsOfDirectory(atPath: dataPath))?.sorted() ?? []
            return files.compactMap { path -> (path: String, size: Int)? in
                var isDirectory: ObjCBool = false
                let full = dataPath + (dataPath.hasSuffix("/") ? "" : "/") + path
                guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue
                else {
                    return nil
                }
                let size = (try? FileManager.default.attributesOfItem(atPath: full)[.size] as? Int) ?? 0
                return (path, size)
            }
        }

        @MainActor
        func printTable(_ title: String, notes: [String] = []) async {
            print("\n== \(title)")
            for note in notes { print("          \(note)") }
            print("features  \(sdk.privacy.enabledFeatures)")
            for (index, line) in heldOffLines(sdk.privacy).enumerated() {
                print("\(index == 0 ? "off      " : "         ") \(line)")
            }
            let statuses = await sdk.consent.allStatuses
            print(
                "consent   "
                    + statuses.keys.sorted().map { "\($0) \(statuses[$0] ?? .unknown)" }.joined(separator: ", "))

            if let files = dataFiles() {
                let lines = files.map { "\($0.path) (\($0.size) B)" }
                print("files     \(lines.isEmpty ? "none" : lines.joined(separator: "\n          "))")
            } else {
                print("files     none (data dir not created)")
            }

            let requests = sdk.collector.requests
            let new = requests.dropFirst(shownRequests).map(\.summary)
            shownRequests = requests.count
            let collectorState = sdk.collector.isRunning ? "" : " (collector never started: no socket opened)"
            print("requests  \(requests.count) received\(collectorState)\(new.isEmpty ? "" : "; new:")")
            for summary in new { print("            \(summary)") }

            let events = sdk.runtime.events(after: shownEvents)
            shownEvents = sdk.runtime.lastEventSequence
            for event in events { print("runtime   \(event)") }

            if let held = sdk.heldAnalytics {
                print(
                    "held      \(held.held) analytics event(s) in memory (consent undecided); \(held.released) released, "
                        + "\(held.dropped) dropped, \(held.purged) purged")
            }

            let rows = sdk.counter.snapshot()
            if rows.isEmpty {
                print("io        nothing allowed, nothing refused")
            } else {
                for (index, row) in rows.enumerated() {
                    let name = FeatureCatalog.builtIn.name(of: row.feature) ?? "\(row.feature)"
                    print("\(index == 0 ? "io       " : "         ") \(name): \(row.counts)")
                }
            }
        }

        /// What a privacy dashboard shows, one category per block: status, who decided and when, expiry, whether to ask
        /// again and why, what blocks it, and its features with why each is on or off.
        @MainActor
        func dashboardLines(_ details: [ConsentSettingsSnapshot.CategoryDetail]) -> [String] {
            let time = Date.ISO8601FormatStyle()
            return details.flatMap { detail -> [String] in
                let decision = detail.decision
                var facts = [decision.status.rawValue, decision.isPermitted ? "permitted" : "not permitted"]
                if let source = decision.source, let decidedAt = decision.decidedAt {
                    facts.append("decided by \(source) on \(decidedAt.formatted(time))")
                }
                if let expiresAt = decision.expiresAt {
                    facts.append("\(decision.status == .expired ? "expired" : "expires") \(expiresAt.formatted(time))")
                }
                if let reason = decision.askReason { facts.append("ask again: \(reason)") }
                if let blocker = decision.blocker { facts.append("blocked: \(blocker)") }
                let features = detail.features.map { reason in
                    "    \(reason.description)"
                }
                return ["dashboard \(decision.category): " + facts.joined(separator: "; ")] + features
            }
        }

        /// The revoke-all report: what was recorded, disabled, purged, reset and sent, and what is left on disk.
        func printRevocation(_ report: RevocationReport) {
            print("revoke-all report")
            let denials = report.consentRecords.map { "\($0.category) \($0.previousStatus) -> \($0.newStatus)" }
            print(
                "  consent     \(denials.isEmpty ? "every category was already denied" : denials.joined(separator: ", "))"
            )
            print(
                "  disabled    \(report.disabledFeatures.isEmpty ? "nothing was enabled" : "\(report.disabledFeatures)")"
            )
            if report.purges.isEmpty { print("  purged      nothing left to purge") }
            for (index, purge) in report.purges.enumerated() {
                let files =
                    purge.report.removedFiles.isEmpty ? "" : " (\(purge.report.removedFiles.joined(separator: ", ")))"
                let identifiers =
                    purge.report.resetIdentifiers.isEmpty
                    ? "" : " (\(purge.report.resetIdentifiers.joined(separator: ", ")))"
                print(
                    "\(index == 0 ? "  purged      " : "              ")\(purge.subsystem): "
                        + "\(purge.report.removedFiles.count) file(s)\(files), \(purge.report.droppedItems) queued item(s), "
                        + "\(purge.report.resetIdentifiers.count) identifier(s)\(identifiers)"
                        + (purge.report.failures.isEmpty
                            ? "" : "; FAILED: \(purge.report.failures.joined(separator: "; "))")
                )
            }
            print(
                "  anonymous   "
                    + (report.identifierReset
                        ? "reset (\(PrivacyDataDirectory.anonymousIdentifierFileName) deleted)" : "none was stored"))
            print("  erasure     \(report.erasure)")
            for failure in report.failures { print("  FAILED      \(failure)") }
            let left = (dataFiles() ?? []).map(\.path)
            print("  left        \(left.isEmpty ? "nothing" : left.joined(separator: ", "))")
        }

        await printTable(
            "step 0: start (\(sdk.privacy.enabledFeatures.isEmpty ? "everything off" : "\(sdk.privacy.enabledFeatures)"))"
        )

        for (index, step) in options.steps.enumerated() {
            var detail = ""
            var notes: [String] = []
            var revocation: RevocationReport?
            switch step {
            case .enable(let features, _):
                sdk.privacy.enableFeatures(features)
            case .disable(let features, _):
                sdk.privacy.disableFeatures(features)
            case .grant(let category), .deny(let category):
                let status: ConsentStatus = if case .grant = step { .granted } else { .denied }
                do {
                    if let record = try await sdk.consent.setStatus(status, for: category, source: .user) {
                        detail = " — recorded \(record.category) \(record.previousStatus) -> \(record.newStatus)"
                    } else {
                        detail = " — already \(status): nothing recorded"
                    }
                } catch {
                    detail = " — \(error)"
                }
            case .att(let status):
                do { detail = " — " + (try await sdk.applyTracking(status)) } catch { detail = " — \(error)" }
            case .track(let count):
                let (accepted, sanitized, report) = await sdk.track(count)
                detail = " — \(accepted) of \(count) accepted"
                switch report.outcome {
                case .flushed:
                    detail +=
                        "; flushed to " + report.backends.map { "\($0.backend) \($0.result)" }.joined(separator: ", ")
                case .purged where (sdk.heldAnalytics?.held ?? 0) > 0:
                    detail += "; gate closed: nothing flushed; held in memory until analytics consent is decided"
                case .purged: detail += "; gate closed: nothing flushed, nothing kept"
                case .alreadyFlushing: break
                }
                var seen: [String: Int] = [:]
                var order: [String] = []
                for event in sanitized {
                    for change in event.stripped.map({ "\(event.name): stripped \($0)" })
                        + event.minimized.map({ "\(event.name): \($0)" })
                    {
                        if seen[change] == nil { order.append(change) }
                        seen[change, default: 0] += 1
                    }
                }
                notes = order.map { seen[$0, default: 1] > 1 ? "\($0) (x\(seen[$0, default: 1]))" : $0 }
            case .trackPending(let count):
                let before = sdk.collector.requests.count
                // Left running: the next step lands while the flush waits on the collector (a stop cancels it).
                Task { await sdk.track(count) }
                // Wait (at most 5 s) until the first upload reached the collector, so the next step lands mid-flush.
                for _ in 0..<500 where sdk.collector.requests.count == before {
                    try? await Task.sleep(for: .milliseconds(10))
                }
                let reached = sdk.collector.requests.count > before
                detail =
                    reached ? " — the upload reached the collector; the flush is still running" : " — nothing uploaded"
            case .cmp(let path):
                detail = await applyCMPKeys(path, to: sdk.consent, notes: &notes)
            case .remote:
                detail = " — \(await sdk.refresher.refresh())"
                notes = ["reason(for: .push): \(sdk.privacy.reason(for: .push))"]
            case .revokeAll:
                let report = await sdk.revokeAll()
                revocation = report
                detail = report.isComplete ? "" : " — INCOMPLETE"
            case .advance(let days):
                clock.withLock { $0 = $0.addingTimeInterval(TimeInterval(days) * 86_400) }
                let expired = await sdk.consent.refresh().map { "\($0.category) \($0.previousStatus) -> expired" }
                detail = expired.isEmpty ? " — nothing expired" : " — " + expired.joined(separator: ", ")
            case .region(let region):
                await sdk.consent.setRegion(region)
                if let pending = await sdk.consent.pendingRegion {
                    detail = " — looser than before: \(pending) applies at the next launch"
                }
            case .child(let isChild):
                await sdk.consent.setChild(isChild)
            case .gpc(let isOn):
                do {
                    let records = try await sdk.consent.applyGlobalPrivacyControl(isOn)
                    detail =
                        records.isEmpty
                        ? " — no change"
                        : " — "
                            + records.map { "\($0.category) \($0.newStatus)" }
                            .joined(separator: ", ")
                } catch {
                    detail = " — \(error)"
                }
            case .dashboard:
                // What ConsentSettings (an @Observable model, iOS 17 / macOS 14) shows, read the way the package's floor
                // (iOS 16, macOS 13) can: the same details, read when the dashboard opens.
                notes = dashboardLines(await ConsentSettingsSnapshot.details(of: sdk.consent))
            }
            await sdk.runtime.settle()
            await printTable("step \(index + 1): \(step)\(detail)", notes: notes)
            if let revocation { printRevocation(revocation) }
        }

        await sdk.runtime.shutdown()

        if options.slowCollector != nil {
            let counts = sdk.collector.eventCounts
            print(
                "\n== slow collector: \(counts.beforeRevocation) event(s) received before revoke-all began, "
                    + "\(counts.afterRevocation) after")
        }

        let trail = (try? await sdk.consent.exportAuditTrail()) ?? Data()
        let trailLines = trail.split(separator: UInt8(ascii: "\n")).count
        if trailLines == 0 {
            print("\n== audit trail: empty (no consent change recorded, no ledger file written)")
        } else {
            print(
                "\n== audit trail: \(PrivacyDataDirectory.consentLedgerFileName), JSON Lines, \(trailLines) record(s)")
            print(String(decoding: trail, as: UTF8.self), terminator: "")
        }

        if isTemporaryDirectory && FileManager.default.fileExists(atPath: dataPath) {
            try? FileManager.default.removeItem(at: dataDirectory)
            print("\nremoved the temporary data dir (pass --data-dir to keep the files)")
        }
    }
}

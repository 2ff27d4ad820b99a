import Dispatch
import FeatureGate
import FeatureGateConfig
import Foundation

/// `featuregate consent explain`: what the app would decide about consent at a given time, from files alone.
///
/// The answer comes from a real ``PrivacyManager`` and ``ConsentManager`` started as the app starts them (the
/// config's policy and `enabledFeatures`, the gate state in an in-memory store, the ledger's lines in an in-memory
/// ledger, a clock stopped at `--at`), so it follows the library's rules, not a copy of them. Nothing is written.
enum ConsentExplainCommand: ToolCommand {
    static let name = "consent explain"
    static let usage = """
        featuregate consent explain --config CONFIG --ledger LEDGER.jsonl [--state STATE_FILE] [--region CODE] \
        [--child] [--gpc] [--at ISO8601] [--json] [--lenient | --airship] [--flag NAME=BIT]...
        """
    static let flags: Set<String> = ReadingOptions.flags.union(["--child", "--gpc", "--json"])
    static let valued: Set<String> = ReadingOptions.valued.union([
        "--config", "--ledger", "--state", "--region", "--at",
    ])

    static let help = """
        OVERVIEW: Show what the app would decide about consent at a given time: each category's status, whether it
        is permitted, when and by whom it was decided, when it expires, whether to ask again, and every feature.

        The consent policy is the config's consentPolicy (the default policy when it has none). Lifetimes run
        against --at; a region's unanswered rule applies; the child mark withholds child-prohibited categories;
        --gpc applies a Global Privacy Control signal that is on now (with no gpc answer in the ledger, that is a
        change, and it refuses the sale-or-sharing categories). Without --state, features follow enabledFeatures
        less what consent withholds. Nothing is written: the files are only read.

        USAGE: \(usage)

        OPTIONS:
          --config CONFIG     The config file (plist or JSON) with enabledFeatures and consentPolicy.
          --ledger LEDGER     The consent ledger (JSON Lines). A missing file is an empty trail.
          --state STATE_FILE  The gate state a FileFeatureStore saved. Without it: nothing stored.
          --region CODE       Where the user is: a country (US) or subdivision (US-CA), any case. Without it only
                              the policy's default unanswered rule applies.
          --child             The app marks the user as a child.
          --gpc               A Global Privacy Control signal is on.
          --at ISO8601        The time to decide at, e.g. 2027-02-04T10:00:00Z or 2027-02-04T11:00:00.250+01:00.
                              Default: now.
          --json              Print one JSON object: {"categories": {NAME: {"status", "permitted", "decidedAt",
                              "source", "expiresAt", "needsAsking", "askReason", "blockedBy", "reason"}},
                              "features": {NAME: true|false}, "at", "region", "child", "gpc"}.
        \(ReadingOptions.help)
          -h, --help          Show this help.

        EXIT STATUS: 0 decided, 1 a file is invalid or cannot be read, 2 usage error.
        """

    static func run(_ arguments: ParsedArguments, console: inout Console) throws(UsageError) -> Int32 {
        let options = try ReadingOptions(arguments)
        guard arguments.operands.isEmpty else {
            throw UsageError(
                message: "unexpected argument '\(arguments.operands[0])'; give files with --config, --ledger")
        }
        guard let configPath = try arguments.value("--config") else { throw UsageError(message: "no --config given") }
        guard let ledgerPath = try arguments.value("--ledger") else { throw UsageError(message: "no --ledger given") }
        let statePath = try arguments.value("--state")
        var region: ConsentRegion?
        if let code = try arguments.value("--region") {
            guard let parsed = ConsentRegion(code) else {
                throw UsageError(
                    message: "--region \(code): expected a country (US) or a subdivision (US-CA), ISO 3166")
            }
            region = parsed
        }
        let at: Date
        if let text = try arguments.value("--at") {
            guard let parsed = parseTime(text) else {
                throw UsageError(
                    message: "--at \(text): expected ISO 8601 with Z or an offset, e.g. 2027-02-04T10:00:00Z")
            }
            at = parsed
        } else {
            at = Date()
        }

        guard let config = FeatureGateTool.loadOrReport(configPath, with: options.reader, console: &console)?.result
        else { return FeatureGateTool.failure }
        let ledgerData: Data
        do {
            ledgerData = try readIfPresent(ledgerPath, limit: FileConsentLedger.maximumFileSize) ?? Data()
        } catch {
            console.err("\(ledgerPath): error: (root): cannot read the consent ledger: \(error)")
            return FeatureGateTool.failure
        }
        for (line, text) in ledgerData.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .enumerated() where !text.isEmpty && ConsentRecordLine.decode(Data(text)) == nil
        {
            console.err(
                "\(ledgerPath): warning: line \(line + 1): cannot decode the entry; every grant reads as unknown")
        }
        var state: Data?
        if let statePath {
            do {
                state = try readIfPresent(statePath, limit: FileFeatureStore.maximumRecordSize)
            } catch {
                console.err("\(statePath): error: (root): cannot read the state file: \(error)")
                return FeatureGateTool.failure
            }
            guard state != nil else {
                console.err("\(statePath): error: (root): cannot read the state file: no such file")
                return FeatureGateTool.failure
            }
        }

        let catalog = options.reader.catalog
        let policy = config.consentPolicy ?? .default
        let privacy = PrivacyManager(
            configuration: config.configuration, store: InMemoryFeatureStore(record: state), catalog: catalog,
            consentPolicy: policy)
        for diagnostic in privacy.startupDiagnostics {
            console.err("\(statePath ?? "state"): warning: (root): \(diagnostic)")
        }
        let consent = ConsentManager(
            privacy: privacy, ledger: InMemoryConsentLedger(jsonLines: ledgerData), region: region,
            isChild: arguments.flags.contains("--child"), now: { at })
        let isGPCOn = arguments.flags.contains("--gpc")
        let decisions = waitFor {
            if isGPCOn { _ = try? await consent.applyGlobalPrivacyControl(true) }
            await consent.refresh()
            return await consent.decisions
        }
        let explanation = Explanation(
            decisions: decisions.values.sorted { $0.category < $1.category },
            features: privacy.reasons().map { (catalog.name(of: $0.feature) ?? "\($0.feature)", $0.isEnabled) },
            at: at, region: region, rule: policy.unanswered.rule(for: region),
            isChild: arguments.flags.contains("--child"),
            isGPCOn: isGPCOn)
        if arguments.flags.contains("--json") {
            console.out(explanation.json)
        } else {
            let source =
                config.consentPolicy == nil ? "the default policy (the config has no consentPolicy)" : configPath
            console.out("policy: version \(policy.version), from \(source)")
            console.out("ledger: \(ledgerPath)\(ledgerData.isEmpty ? " (empty)" : "")")
            console.out("state: \(statePath ?? "none (features follow enabledFeatures)")")
            for line in explanation.table { console.out(line) }
        }
        return FeatureGateTool.success
    }

    /// Reads ISO 8601 with or without fractional seconds, with `Z` or an offset.
    static func parseTime(_ text: String) -> Date? {
        let styles = [
            Date.ISO8601FormatStyle(includingFractionalSeconds: true), Date.ISO8601FormatStyle(),
        ]
        for style in styles {
            if let date = try? style.parse(text) { return date }
        }
        return nil
    }

    /// Runs `body` on the concurrency runtime and waits for it: the tool is synchronous, the consent manager an actor.
    private static func waitFor<Value: Sendable>(_ body: @escaping @Sendable () async -> Value) -> Value {
        let result = LockedValue<Value?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let value = await body()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    /// A file named on the command line, through the file layer (a FIFO or a device is refused, not waited on, and
    /// nothing over `limit` is read), or `nil` when it does not exist.
    private static func readIfPresent(_ path: String, limit: Int) throws(FileStoreError) -> Data? {
        do {
            return try AtomicFile.readNamedFile(atPath: path, limit: limit)
        } catch  where error.problem == .system(ENOENT) {
            return nil
        }
    }
}

/// What `consent explain` prints, as JSON or as a table.
private struct Explanation {
    var decisions: [ConsentDecision]
    var features: [(name: String, isEnabled: Bool)]
    var at: Date
    var region: ConsentRegion?
    var rule: UnansweredConsent
    var isChild: Bool
    var isGPCOn: Bool

    static let timeStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    func time(_ date: Date?) -> String { date.map { $0.formatted(Self.timeStyle) } ?? "-" }

    var json: JSONOutput {
        func date(_ date: Date?) -> JSONOutput { .stringOrNull(date.map { $0.formatted(Self.timeStyle) }) }
        let categories = decisions.map { decision in
            (
                decision.category.rawValue,
                JSONOutput.object([
                    ("status", .string(decision.status.rawValue)), ("permitted", .bool(decision.isPermitted)),
                    ("decidedAt", date(decision.decidedAt)), ("source", .stringOrNull(decision.source?.rawValue)),
                    ("expiresAt", date(decision.expiresAt)), ("needsAsking", .bool(decision.needsAsking)),
                    ("askReason", .stringOrNull(decision.askReason?.rawValue)),
                    ("blockedBy", .stringOrNull(decision.blocker?.rawValue)), ("reason", .string(reason(decision))),
                ])
            )
        }
        return .object([
            ("categories", .object(categories)), ("features", .object(features.map { ($0.name, .bool($0.isEnabled)) })),
            ("at", date(at)), ("region", .stringOrNull(region?.code)), ("child", .bool(isChild)),
            ("gpc", .bool(isGPCOn)),
        ])
    }

    var table: [String] {
        var lines = [
            "at: \(time(at)); region: \(region?.code ?? "none") (unanswered means \(rule.rawValue)); "
                + "child: \(isChild ? "yes" : "no"); Global Privacy Control: \(isGPCOn ? "on" : "off")", "",
        ]
        let width = max(8, decisions.map(\.category.rawValue.count).max() ?? 0) + 2
        lines.append(pad("CATEGORY", width) + "STATUS      PERMITTED  EXPIRES                   WHY")
        for decision in decisions {
            lines.append(
                pad(decision.category.rawValue, width) + pad(decision.status.rawValue, 12)
                    + pad(decision.isPermitted ? "yes" : "no", 11) + pad(time(decision.expiresAt), 26)
                    + reason(decision))
        }
        lines.append("")
        let featureWidth = max(7, features.map(\.name.count).max() ?? 0) + 2
        lines.append(pad("FEATURE", featureWidth) + "STATE")
        for feature in features { lines.append(pad(feature.name, featureWidth) + (feature.isEnabled ? "on" : "off")) }
        return lines
    }

    /// One sentence: the answer and who gave it, when it was given, why to ask again, and what blocks it.
    func reason(_ decision: ConsentDecision) -> String {
        let by = decision.source.map { " by \($0.rawValue)" } ?? ""
        let on = decision.decidedAt.map { " on \(time($0))" } ?? ""
        var text: String
        switch decision.status {
        case .granted: text = "granted\(by)\(on)"
        case .denied, .restricted:
            text = "\(decision.status.rawValue)\(by)\(on)" + (decision.source == nil ? " (kept by the gate state)" : "")
        case .expired:
            text = (decision.askReason == .grantExpired ? "grant" : "refusal") + "\(by)\(on) expired; ask again"
        case .unknown:
            switch decision.askReason {
            case .policyVersionChanged: text = "granted\(by) under an older policy version; ask again"
            case .sourceAnswerMissing: text = "\(decision.source?.rawValue ?? "the source") no longer answers; ask"
            default: text = "never asked"
            }
        }
        switch decision.blocker {
        case .child: text += "; withheld: the user is a child"
        case .globalPrivacyControl: text += "; Global Privacy Control is on"
        case .region: text += "; not permitted until granted (opt-in \(region.map { "in \($0.code)" } ?? "by default"))"
        case nil:
            if decision.isPermitted && decision.status != .granted {
                text += "; permitted until refused (opt-out \(region.map { "in \($0.code)" } ?? "by default"))"
            }
        }
        return text
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(1, width - text.count))
    }
}

import FeatureGate
import FeatureGateConfig
import Foundation

/// `featuregate explain FILE [--state STATE_FILE]`: every flag, on or off, and why.
///
/// The answer comes from a real ``PrivacyManager`` started with the config and an in-memory store holding the state
/// file's record, so it follows the same precedence the app does (stored state over configuration, unless reset).
enum ExplainCommand: ToolCommand {
    static let name = "explain"
    static let usage = "featuregate explain [--state STATE_FILE] [--lenient | --airship] [--flag NAME=BIT]... FILE"
    static let flags: Set<String> = ReadingOptions.flags
    static let valued: Set<String> = ReadingOptions.valued.union(["--state"])

    static let help = """
        OVERVIEW: Show every feature, on or off, and why.

        Starts the gate as an app would: with FILE's configuration and, when given, the state a FileFeatureStore
        saved (STATE_FILE, e.g. {"decidedFeatures":17,"deniedConsentCategories":[],"enabledFeatures":1,"version":2}).
        Flags decided in the stored state keep their value; every other flag follows the configuration, and
        resetEnabledFeatures discards the stored flags except the user's refusals (a consent refusal, or a flag
        revoke-all turned off), which the app keeps too. Nothing is written; the state file is only read.

        USAGE: \(usage)

        OPTIONS:
          --state STATE_FILE  The stored state to start from. Without it: a first launch, nothing stored.
        \(ReadingOptions.help)
          -h, --help          Show this help.

        EXIT STATUS: 0 explained, 1 FILE is invalid or a file cannot be read, 2 usage error.
        """

    static func run(_ arguments: ParsedArguments, console: inout Console) throws(UsageError) -> Int32 {
        let options = try ReadingOptions(arguments)
        let file = try arguments.onlyOperand("FILE", tooMany: "explain takes one FILE")
        let statePath = try arguments.value("--state")
        guard let result = FeatureGateTool.loadOrReport(file, with: options.reader, console: &console)?.result
        else { return FeatureGateTool.failure }

        var record: Data?
        if let statePath {
            do {
                record = try AtomicFile.readNamedFile(atPath: statePath, limit: FileFeatureStore.maximumRecordSize)
            } catch {
                console.err("\(statePath): error: (root): cannot read the state file: \(describe(error))")
                return FeatureGateTool.failure
            }
        }
        let catalog = options.reader.catalog
        let configuration = result.configuration
        let manager = PrivacyManager(
            configuration: configuration, store: InMemoryFeatureStore(record: record), catalog: catalog)
        for diagnostic in manager.startupDiagnostics {
            console.err("\(statePath ?? "state"): warning: (root): \(describeStartup(diagnostic))")
        }

        let format = result.format.map { " (\($0))" } ?? ""
        console.out("config: \(file)\(format)")
        // In Airship-compatible mode a missing key is Airship's default, not something the file says.
        let defaulted = result.warnings.contains { $0.kind == .defaultedToAll }
        let analyticsSwitch = result.warnings.first { $0.kind == .airshipAnalyticsSwitchedOff }?.keyPath
        console.out(
            "  enabledFeatures: \(list(catalog.names(of: configuration.enabledFeatures)))"
                + (defaulted ? " (missing: Airship's default, every feature)" : ""))
        console.out("  resetEnabledFeatures: \(configuration.resetEnabledFeatures)")
        if let statePath, let record {
            // A reset discards the decided flags, never a refusal (consent, revoke-all): the library keeps those.
            let reset = configuration.resetEnabledFeatures
            let stored = (try? FeatureStateRecord(decoding: record)).map {
                describe($0, catalog: catalog, reset: reset)
            }
            console.out("state: \(statePath): \(stored ?? "unreadable" + (reset ? discarded : ""))")
        } else {
            console.out("state: none (a first launch: nothing stored)")
        }
        console.out("")

        let reasons = manager.reasons()
        let width = max(4, reasons.map { (catalog.name(of: $0.feature) ?? "").count }.max() ?? 0) + 2
        console.out(pad("FLAG", width) + "STATE  WHY")
        for reason in reasons {
            let flag = catalog.name(of: reason.feature) ?? "bit\(reason.feature.rawValue.trailingZeroBitCount)"
            let state = reason.isEnabled ? "on     " : "off    "
            var explanation = why(reason, defaulted: defaulted)
            if let analyticsSwitch, reason.feature == .analytics {
                explanation += "; Airship itself would record no analytics events: \(analyticsSwitch) is false"
            }
            console.out(pad(flag, width) + state + explanation)
        }
        return FeatureGateTool.success
    }

    private static func why(_ reason: FeatureReason, defaulted: Bool) -> String {
        let named =
            defaulted
            ? "Airship's default (enabledFeatures is missing)"
            : reason.isLocallyEnabled ? "in enabledFeatures" : "not in enabledFeatures"
        switch reason.source {
        case .configuration: return "configuration: \(named)"
        case .storedState:
            return "stored state: \(reason.isLocallyEnabled ? "enabled" : "disabled") by the app or user earlier"
        case .reset: return "configuration: \(named) (resetEnabledFeatures discarded the stored state)"
        case .unreadableStoredState: return "configuration: \(named) (the stored state is unreadable)"
        case .app: return "the app or user"
        case .consent: return "a consent grant or refusal"
        case .revocation: return "revoke-all: the user's refusal, kept until the app or user turns it on"
        }
    }

    private static func describeStartup(_ diagnostic: PrivacyManagerDiagnostic) -> String {
        switch diagnostic {
        case .storedStateUnreadable(_, let error): "\(error); the app would use the configuration"
        case .unknownFlagsDropped(_, let dropped):
            "stored state has flags this catalog does not know (0x\(String(dropped.rawValue, radix: 16))); dropped"
        default: "\(diagnostic)"
        }
    }

    private static func describe(_ error: any Error) -> String {
        guard let error = error as? FileStoreError else { return "\(error)" }
        return error.code == ENOENT ? "no such file" : error.reason
    }

    private static func list(_ names: [String]) -> String { "[" + names.joined(separator: ", ") + "]" }

    /// What a stored record decided: the flags on, the flags off (those it does not name follow the
    /// configuration), the flags revoke-all turned off, and the consent refusals it keeps. With `reset`, says which
    /// part the reset discards (the decided flags) and which it keeps (the refusals).
    private static func describe(_ record: FeatureStateRecord, catalog: FeatureCatalog, reset: Bool) -> String {
        let decided = catalog.mask(record.decidedFeatures)
        let revoked = catalog.mask(record.revokedFeatures)
        var text =
            "on \(list(catalog.names(of: decided.intersection(record.enabledFeatures))))"
            + ", off \(list(catalog.names(of: decided.subtracting(record.enabledFeatures).subtracting(revoked))))"
            + (reset ? discarded : "")
        if !revoked.isEmpty {
            text += ", revoked \(list(catalog.names(of: revoked)))"
            if reset { text += " (kept: revoke-all is the user's refusal)" }
        }
        if !record.deniedConsentCategories.isEmpty {
            text += ", consent refused \(list(record.deniedConsentCategories.sorted().map(\.description)))"
            if reset { text += " (kept: a reset never undoes a consent refusal)" }
        }
        return text
    }

    private static let discarded = " (discarded: resetEnabledFeatures is true)"

    private static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(1, width - text.count))
    }
}

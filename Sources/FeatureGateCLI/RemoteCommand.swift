import FeatureGate
import FeatureGateRemote
import Foundation

/// `featuregate remote check`: read a remote-data payload as the library does, for one platform and version pair.
///
/// Exit statuses: 0 the payload is valid, 1 it is invalid or unreadable (the message names the key path), 2 a usage
/// error.
enum RemoteCommand {
    static let overview = """
        OVERVIEW: Check Airship remote-data payloads (the server's kill switch).

        USAGE: featuregate remote <subcommand> [options]

        SUBCOMMANDS:
          check     Validate a payload and show what it disables for a platform, SDK version and app version.

        Run 'featuregate remote check --help' for its options.
        """

    static func run(_ arguments: [String], console: inout Console) -> Int32 {
        switch arguments.first {
        case "check":
            return FeatureGateTool.runCommand(RemoteCheckCommand.self, Array(arguments.dropFirst()), console: &console)
        case "--help", "-h", "help":
            console.help(overview)
            return FeatureGateTool.success
        case let other:
            let found = other.map { "unknown subcommand '\($0)'" } ?? "no subcommand"
            console.err("featuregate remote: error: \(found); expected 'check'")
            console.err("Run 'featuregate remote --help' for the subcommands.")
            return FeatureGateTool.usageFailure
        }
    }
}

/// `featuregate remote check FILE --platform ios|android --sdk-version V --app-version V [--json]`.
enum RemoteCheckCommand: ToolCommand {
    static let name = "remote check"
    static let usage =
        "featuregate remote check FILE --platform ios|android --sdk-version V --app-version V [--json]"
    static let flags: Set<String> = ["--json"]
    static let valued: Set<String> = ["--platform", "--sdk-version", "--app-version"]

    static let help = """
        OVERVIEW: Validate an Airship remote-data payload (a response with "payloads", or a bare app config) and
        show which features it disables for one platform, SDK version and app version, rule by rule.

        USAGE: \(usage)

        FILE '-' reads standard input; at most \(RemoteConfigParser.maximumSize) bytes are read.

        OPTIONS:
          --platform ios|android   Which app_config:<platform> payload is merged over app_config.
          --sdk-version V          The SDK version sdk_versions is matched against: N(.N)*, optionally -qualifier.
          --app-version V          The app version app_versions is matched against, in the same form.
          --json                   Print one JSON object: {"file", "valid": true, "platform", "sdkVersion",
                                   "appVersion", "disabled": [sorted config names], "reasons": {name: rule},
                                   "refreshInterval": seconds or null}. For an invalid payload:
                                   {"file", "valid": false, "keyPath", "message"}, with no "disabled".
          -h, --help               Show this help.

        EXIT STATUS: 0 valid, 1 invalid or unreadable (the message names the key path), 2 usage error.
        """

    static func run(_ arguments: ParsedArguments, console: inout Console) throws(UsageError) -> Int32 {
        let file = try arguments.onlyOperand("FILE", tooMany: "give exactly one FILE")
        let platform = try arguments.required(
            "--platform", as: RemoteDataPlatform.self, missing: "--platform is required (ios or android)",
            expected: "ios or android")
        let sdkVersion = try version("--sdk-version", arguments)
        let appVersion = try version("--app-version", arguments)
        let asJSON = arguments.flags.contains("--json")
        let target = RemoteConfigTarget(platform: platform, sdkVersion: sdkVersion, appVersion: appVersion)

        let data: Data
        do {
            data = try read(file)
        } catch {
            report(file: file, keyPath: "", message: "cannot read: \(error.localizedDescription)", asJSON, &console)
            return FeatureGateTool.failure
        }
        let decision: RemoteConfigDecision
        do {
            decision = try RemoteConfigParser.parse(data, for: target)
        } catch {
            let origin = error.source.map { " (from \($0))" } ?? ""
            report(
                file: file, keyPath: error.keyPath,
                message: "found \(error.found), expected \(error.expected)\(origin)", asJSON, &console)
            return FeatureGateTool.failure
        }
        let catalog = FeatureCatalog.builtIn
        let disabled = decision.disables.features
        if asJSON {
            let reasons = disabled.flags.compactMap { flag in
                catalog.name(of: flag).map { ($0, JSONOutput.string(decision.disables.rule(for: flag) ?? "")) }
            }.sorted { $0.0 < $1.0 }
            console.out(
                JSONOutput.object([
                    ("file", .string(file)), ("valid", .bool(true)), ("platform", .string(platform.rawValue)),
                    ("sdkVersion", .string(sdkVersion)), ("appVersion", .string(appVersion)),
                    ("disabled", .strings(catalog.names(of: disabled).sorted())), ("reasons", .object(reasons)),
                    ("refreshInterval", decision.disables.refreshInterval.map(JSONOutput.double) ?? .null),
                ]))
        } else {
            explain(decision, file: file, target: target, console: &console)
        }
        return FeatureGateTool.success
    }

    /// A version option: required, `N(.N)*` with an optional `-qualifier`.
    private static func version(_ option: String, _ arguments: ParsedArguments) throws(UsageError) -> String {
        guard let value = try arguments.value(option) else { throw UsageError(message: "\(option) is required") }
        guard IvyVersionConstraint.numericVersion(value[...]) != nil else {
            throw UsageError(message: "\(option) \(value): expected N(.N)* with an optional -qualifier, e.g. 17.2.0")
        }
        return value
    }

    /// Reads at most one byte more than the parser accepts, so a huge input is refused without being read whole.
    /// A named file goes through the file layer, so a FIFO or a device is refused instead of blocking.
    private static func read(_ file: String) throws -> Data {
        guard file == "-" else {
            return try AtomicFile.readNamedFile(atPath: file, limit: RemoteConfigParser.maximumSize + 1)
        }
        return try FileHandle.standardInput.read(upToCount: RemoteConfigParser.maximumSize + 1) ?? Data()
    }

    private static func report(file: String, keyPath: String, message: String, _ asJSON: Bool, _ console: inout Console)
    {
        if asJSON {
            console.out(
                JSONOutput.object([
                    ("file", .string(file)), ("valid", .bool(false)), ("keyPath", .string(keyPath)),
                    ("message", .string(message)),
                ]))
        } else {
            console.out("\(file): error: \(keyPath.isEmpty ? "" : keyPath + ": ")\(message)")
        }
    }

    /// The readable explanation: the format, every name and rule with the versions it matched, the result.
    private static func explain(
        _ decision: RemoteConfigDecision, file: String, target: RemoteConfigTarget, console: inout Console
    ) {
        let catalog = FeatureCatalog.builtIn
        let form = decision.isResponse ? "remote-data response" : "app config"
        console.out(
            "\(file): valid \(form) for \(target.platform.rawValue), SDK \(target.sdkVersion), "
                + "app \(target.appVersion)")
        for name in decision.names {
            let flags = name.features.isEmpty ? "nothing" : catalog.names(of: name.features).joined(separator: ", ")
            console.out("  \(name.keyPath) \"\(name.name)\": disables \(flags)")
        }
        for rule in decision.rules {
            console.out("  \(rule.keyPath): \(rule.applies ? "applies" : "does not apply")")
            for line in rule.explanation { console.out("    \(line)") }
            if let interval = rule.refreshInterval { console.out("    remote_data_refresh_interval: \(interval) s") }
        }
        let disabled = decision.disables.features
        console.out(
            "disabled: " + (disabled.isEmpty ? "nothing" : catalog.names(of: disabled).sorted().joined(separator: ", "))
        )
        if let interval = decision.disables.refreshInterval { console.out("refresh interval: \(interval) s") }
    }
}

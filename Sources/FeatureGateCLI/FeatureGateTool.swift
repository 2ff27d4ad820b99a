import FeatureGate
import FeatureGateConfig
import Foundation

/// The `featuregate` command line: `check`, `explain` and `convert`.
///
/// Exit statuses: 0 success (every file valid), 1 a file is invalid or cannot be read or written, 2 a usage error.
enum FeatureGateTool {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usageFailure: Int32 = 2
    /// The release this tool belongs to: the newest version in CHANGELOG.md (a test keeps the two equal).
    static let version = "0.1.0"

    static let overview = """
        OVERVIEW: Check, explain and convert FeatureGate config files: XML, binary and old-style plists, JSON,
        and .properties files (Airship Android's airshipconfig.properties).

        USAGE: featuregate <command> [options] FILE...
               featuregate --version

        COMMANDS:
          check     Validate config files: one line per problem, exit 1 if any file is invalid.
          explain   Show every feature, on or off, and why (configuration, stored state, reset).
          convert   Write a config as JSON, an XML plist, a binary plist or an old-style plist.
          tcf       Decode IAB consent strings and apply a CMP's keys ('featuregate tcf --help').
          gpp       Decode a GPP string, every US section field by field ('featuregate gpp --help').
          remote    Check a server's remote-data payload ('featuregate remote check --help').
          consent   Explain what a consent ledger decides under a config's policy ('featuregate consent --help').

        Run 'featuregate <command> --help' for a command's options, 'featuregate --version' for the version.
        """

    static func run(_ arguments: [String], console: inout Console) -> Int32 {
        guard let command = arguments.first else {
            console.helpToError(overview)
            return usageFailure
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "check": return runCommand(CheckCommand.self, rest, console: &console)
        case "explain": return runCommand(ExplainCommand.self, rest, console: &console)
        case "convert": return runCommand(ConvertCommand.self, rest, console: &console)
        case "tcf": return TCFCommand.run(rest, console: &console)
        case "gpp": return GPPCommand.run(rest, console: &console)
        case "remote": return RemoteCommand.run(rest, console: &console)
        case "consent": return ConsentCommand.run(rest, console: &console)
        case "--version":
            guard rest.isEmpty else {
                console.err("featuregate: error: --version takes no arguments")
                return usageFailure
            }
            console.out(version)
            return success
        case "--help", "-h", "help":
            switch rest.first {
            case "check": console.help(CheckCommand.help)
            case "explain": console.help(ExplainCommand.help)
            case "convert": console.help(ConvertCommand.help)
            case "tcf": console.help(TCFCommand.overview)
            case "gpp": console.help(GPPCommand.overview)
            case "remote": console.help(RemoteCommand.overview)
            case "consent": console.help(ConsentCommand.overview)
            case nil: console.help(overview)
            case let other?:
                console.err("featuregate: error: unknown command '\(other)'")
                return usageFailure
            }
            return success
        default:
            let hint =
                NameMatching.closest(
                    to: command, among: ["check", "explain", "convert", "tcf", "gpp", "remote", "consent"]
                )
                .map { "; did you mean '\($0)'?" } ?? ""
            console.err("featuregate: error: unknown command '\(command)'\(hint)")
            console.err("Run 'featuregate --help' for the commands.")
            return usageFailure
        }
    }

    /// Parses a command's arguments and runs it: `--help` prints its help, a usage error exits 2 with its usage.
    static func runCommand<Command: ToolCommand>(
        _ command: Command.Type, _ arguments: [String], console: inout Console
    ) -> Int32 {
        do {
            let parsed = try ParsedArguments(
                arguments, flags: Command.flags.union(["--help", "-h"]), valued: Command.valued,
                unknownOptionsAreOperands: Command.unknownOptionsAreOperands)
            if parsed.flags.contains("--help") || parsed.flags.contains("-h") {
                console.help(Command.help)
                return success
            }
            return try Command.run(parsed, console: &console)
        } catch {
            console.err("featuregate \(Command.name): error: \(error.message)")
            console.err("Usage: \(Command.usage)")
            console.err("Run 'featuregate \(Command.name) --help' for more.")
            return usageFailure
        }
    }

    /// Runs a command group (`featuregate tcf …`): the subcommand its first argument names, with the arguments after
    /// it. `--help` prints the group's overview; no subcommand prints it as an error, and an unknown one is a usage
    /// error naming those there are.
    static func runSubcommand(
        of group: String, overview: String, _ subcommands: [(name: String, command: any ToolCommand.Type)],
        _ arguments: [String], console: inout Console
    ) -> Int32 {
        guard let subcommand = arguments.first else {
            console.helpToError(overview)
            return usageFailure
        }
        if let match = subcommands.first(where: { $0.name == subcommand }) {
            return runCommand(match.command, Array(arguments.dropFirst()), console: &console)
        }
        switch subcommand {
        case "--help", "-h", "help":
            console.help(overview)
            return success
        default:
            let expected = subcommands.map { "'\($0.name)'" }.joined(separator: " or ")
            console.err("featuregate \(group): error: unknown subcommand '\(subcommand)'; expected \(expected)")
            console.err("Run 'featuregate \(group) --help' for the subcommands.")
            return usageFailure
        }
    }

    /// Reads one config operand (a path, or `-` for standard input) for a command that goes on only with a valid
    /// file: its errors are printed and the result is `nil`, or its warnings are printed and it is returned.
    static func loadOrReport(
        _ operand: String, with reader: ConfigReader, console: inout Console
    ) -> ConfigDocument? {
        switch loadDocument(operand, with: reader) {
        case .success(let document):
            for warning in document.result.warnings { console.err(warning.description) }
            return document
        case .failure(let error):
            for diagnostic in error.diagnostics { console.err(diagnostic.description) }
            return nil
        }
    }

    /// Reads one config operand (a path, or `-` for standard input) and keeps its parsed tree.
    static func loadDocument(_ operand: String, with reader: ConfigReader) -> Result<ConfigDocument, ConfigError> {
        loadDocumentAndFile(operand, with: reader).document
    }

    /// Reads one config operand and keeps its parsed tree, and its bytes with the name its diagnostics give it
    /// (`nil` when it could not be read).
    static func loadDocumentAndFile(
        _ operand: String, with reader: ConfigReader
    ) -> (document: Result<ConfigDocument, ConfigError>, file: (source: String, bytes: [UInt8])?) {
        var file: (source: String, bytes: [UInt8])?
        do {
            if operand == "-" {
                let data = (try? FileHandle.standardInput.read(upToCount: reader.limits.maximumFileSize + 1)) ?? nil
                file = ("<stdin>", [UInt8](data ?? Data()))
                return (.success(try reader.readDocument(data ?? Data(), sourceName: "<stdin>")), file)
            }
            let read = try reader.readBytes(contentsOf: URL(filePath: operand))
            file = read
            return (.success(try reader.readDocument(bytes: read.bytes, source: read.source)), file)
        } catch {
            return (.failure(error), file)
        }
    }
}

/// One subcommand: the options it takes, its help, and what it does.
protocol ToolCommand {
    static var name: String { get }
    static var usage: String { get }
    static var help: String { get }
    static var flags: Set<String> { get }
    static var valued: Set<String> { get }
    /// Whether an argument that is not exactly one of its options is an operand rather than a usage error.
    static var unknownOptionsAreOperands: Bool { get }
    static func run(_ arguments: ParsedArguments, console: inout Console) throws(UsageError) -> Int32
}

extension ToolCommand {
    static var unknownOptionsAreOperands: Bool { false }
}

import FeatureGate
import FeatureGateConfig
import Foundation

/// `featuregate convert FILE --to json|xml|binary [-o OUT]`: rewrites a config in another format.
enum ConvertCommand: ToolCommand {
    static let name = "convert"
    static let usage =
        "featuregate convert FILE --to json|xml|binary [-o OUT] [--lenient | --airship] [--flag NAME=BIT]..."
    static let flags: Set<String> = ReadingOptions.flags
    static let valued: Set<String> = ReadingOptions.valued.union(["--to", "-o", "--output"])

    static let help = """
        OVERVIEW: Write a config as JSON, an XML plist or a binary plist.

        FILE is read and validated first; an invalid FILE converts to nothing (exit 1). The output holds
        enabledFeatures as a sorted array of names (never 'all' or a bitmask, so it means the same flags when an
        SDK adds new ones) and resetEnabledFeatures. Other keys are not converted; a note on standard error
        lists them.

        USAGE: \(usage)

        OPTIONS:
          --to FORMAT         json, xml or binary.
          -o, --output OUT    Write to OUT (replaced atomically) instead of standard output; OUT '-' is
                              standard output. A binary plist is not written to a terminal.
        \(ReadingOptions.help)
          -h, --help          Show this help.

        EXIT STATUS: 0 converted, 1 FILE is invalid or a file cannot be read or written, 2 usage error.
        """

    static func run(_ arguments: ParsedArguments, console: inout Console) throws(UsageError) -> Int32 {
        let options = try ReadingOptions(arguments)
        guard arguments.operands.count == 1, let file = arguments.operands.first else {
            throw UsageError(message: arguments.operands.isEmpty ? "no FILE given" : "convert takes one FILE")
        }
        guard let target = try arguments.value("--to") else {
            throw UsageError(message: "--to json|xml|binary is required")
        }
        guard let format = ConfigFormat(rawValue: target) else {
            throw UsageError(message: "--to \(target): expected json, xml or binary")
        }
        if arguments.values["-o"] != nil && arguments.values["--output"] != nil {
            throw UsageError(message: "give -o or --output, not both")
        }
        var output = try arguments.value("-o")
        if output == nil { output = try arguments.value("--output") }
        // '-' is standard output, as FILE '-' is standard input.
        if output == "-" { output = nil }
        if format == .binary && output == nil && console.outputIsTerminal {
            throw UsageError(message: "refusing to write a binary plist to a terminal; use -o OUT")
        }

        let result: ConfigReadResult
        switch FeatureGateTool.load(file, with: options.reader) {
        case .success(let read): result = read
        case .failure(let error):
            for diagnostic in error.diagnostics { console.err(diagnostic.description) }
            return FeatureGateTool.failure
        }
        for warning in result.warnings { console.err(warning.description) }
        if result.consentPolicy != nil {
            // Dropping the policy would leave the converted file's consent looser than the original's.
            console.err(
                "\(file): error: consentPolicy: convert cannot write a consent policy yet; convert the file by hand, "
                    + "or remove consentPolicy first")
            return FeatureGateTool.failure
        }
        if !result.ignoredKeys.isEmpty {
            console.err(
                "featuregate convert: note: not converted: \(result.ignoredKeys.joined(separator: ", ")) "
                    + "(only enabledFeatures and resetEnabledFeatures are written)")
        }
        let data = ConfigWriter.data(for: result.configuration, as: format, catalog: options.reader.catalog)
        guard let output else {
            console.outBytes(data)
            return FeatureGateTool.success
        }
        do {
            try data.write(to: URL(filePath: output), options: .atomic)
        } catch {
            console.err(
                "featuregate convert: error: cannot write \(output): \((error as NSError).localizedDescription)")
            return FeatureGateTool.failure
        }
        return FeatureGateTool.success
    }
}

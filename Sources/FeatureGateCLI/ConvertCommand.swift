import FeatureGate
import FeatureGateConfig
import Foundation

/// `featuregate convert FILE --to json|xml|binary|openstep|properties [-o OUT]`: rewrites a config in another format.
enum ConvertCommand: ToolCommand {
    static let name = "convert"
    static let usage =
        "featuregate convert FILE --to json|xml|binary|openstep|properties [-o OUT] [--lenient | --airship] [--flag NAME=BIT]..."
    static let flags: Set<String> = ReadingOptions.flags
    static let valued: Set<String> = ReadingOptions.valued.union(["--to", "-o", "--output"])

    static let help = """
        OVERVIEW: Write a config as JSON, an XML plist, a binary plist, an old-style (OpenStep) plist or a
        .properties file.

        FILE (in any format check reads) is read and validated first; an invalid FILE converts to nothing (exit 1). Every key is kept:
        enabledFeatures as a sorted array of names (never 'all' or a bitmask, so it means the same flags when an
        SDK adds new ones) and resetEnabledFeatures in canonical form, every other key with its value and type.
        A value the target format cannot hold (a date in JSON, a number in an old-style plist) is an error that
        names its key path, and nothing is written.

        USAGE: \(usage)

        OPTIONS:
          --to FORMAT         json, xml, binary, openstep or properties (Airship Android's
                              airshipconfig.properties; text values only).
          -o, --output OUT    Write to OUT (replaced atomically; FILE itself may be OUT) instead of standard
                              output; OUT '-' is standard output. A binary plist is not written to a terminal.
        \(ReadingOptions.help)
          -h, --help          Show this help.

        EXIT STATUS: 0 converted, 1 FILE is invalid or a file cannot be read or written, 2 usage error.
        """

    static func run(_ arguments: ParsedArguments, console: inout Console) throws(UsageError) -> Int32 {
        let options = try ReadingOptions(arguments)
        let file = try arguments.onlyOperand("FILE", tooMany: "convert takes one FILE")
        let format = try arguments.required(
            "--to", as: ConfigFormat.self, missing: "--to json|xml|binary|openstep|properties is required",
            expected: "json, xml, binary, openstep or properties")
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

        guard let document = FeatureGateTool.loadOrReport(file, with: options.reader, console: &console) else {
            return FeatureGateTool.failure
        }
        let result = document.result
        let converted = ConfigWriter.document(
            document.root, with: result.configuration, catalog: options.reader.catalog, format: format)
        let data: Data
        do {
            data = Data(try ConfigDocumentWriter.data(for: converted, as: format))
        } catch {
            console.err(error.diagnostic(source: result.source).description)
            return FeatureGateTool.failure
        }
        guard let output else {
            console.outBytes(data)
            return FeatureGateTool.success
        }
        // The whole input was read above, so OUT may be FILE: the rename replaces it only once all is written.
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

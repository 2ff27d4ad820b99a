/// `featuregate consent explain`: what a consent ledger decides under a config's policy.
enum ConsentCommand {
    static let overview = """
        OVERVIEW: Explain consent from files: a config's consentPolicy, a consent ledger, the gate state.

        USAGE: featuregate consent <subcommand> [options]

        SUBCOMMANDS:
          explain   Show each category's status, permission, expiry and why, and every feature, at a given time.

        Run 'featuregate consent explain --help' for its options.
        """

    static func run(_ arguments: [String], console: inout Console) -> Int32 {
        guard let subcommand = arguments.first else {
            console.helpToError(overview)
            return FeatureGateTool.usageFailure
        }
        switch subcommand {
        case "explain":
            return FeatureGateTool.runCommand(
                ConsentExplainCommand.self, Array(arguments.dropFirst()), console: &console)
        case "--help", "-h", "help":
            console.help(overview)
            return FeatureGateTool.success
        default:
            console.err("featuregate consent: error: unknown subcommand '\(subcommand)'; expected 'explain'")
            console.err("Run 'featuregate consent --help' for the subcommands.")
            return FeatureGateTool.usageFailure
        }
    }
}

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
        FeatureGateTool.runSubcommand(
            of: "consent", overview: overview, [("explain", ConsentExplainCommand.self)], arguments, console: &console)
    }
}

// The `featuregate` tool: check, explain and convert FeatureGate config files.
import Foundation

var console = Console()
let status = FeatureGateTool.run(Array(CommandLine.arguments.dropFirst()), console: &console)
exit(status)

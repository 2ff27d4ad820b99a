// The `featuregate` tool: check, explain and convert FeatureGate config files.
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

var console = Console()
let status = FeatureGateTool.run(Array(CommandLine.arguments.dropFirst()), console: &console)
exit(status)

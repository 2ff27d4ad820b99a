#if os(macOS) || os(Linux)
import Foundation
import PackageTestSupport
import ProcessTestSupport

/// Runs `featuregate` with `arguments` in `directory`.
func featuregate(_ arguments: [String], in directory: URL = packageRoot) throws -> ToolRun {
    try runBuiltExecutable("featuregate", arguments, in: directory)
}
#endif

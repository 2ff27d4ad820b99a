#if os(macOS) || os(Linux)
import Foundation
import PackageTestSupport
import ProcessTestSupport
import Testing

/// Runs `featuregate` with `arguments` in `directory`, feeding `input` on standard input.
///
/// Output goes to files rather than pipes, so a large output can never block the child.
func featuregate(_ arguments: [String], in directory: TemporaryDirectory, input: Data = Data()) throws -> ToolRun {
    try featuregate(arguments, in: directory.url, input: input)
}

/// Runs `featuregate` with `arguments` in the directory at `url`; creates nothing there.
func featuregate(_ arguments: [String], in url: URL, input: Data = Data()) throws -> ToolRun {
    try runBuiltExecutable("featuregate", arguments, in: url, input: input)
}
#endif

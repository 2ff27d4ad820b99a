import Foundation
import PackageTestSupport
import Testing

/// One run of the built `featuregate` executable.
struct ToolRun {
    var status: Int32
    var output: String
    var errorOutput: String

    var lines: [String] { output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
    var errorLines: [String] {
        errorOutput.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }
}

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

/// Runs an executable of the package, built next to the test bundle.
func runBuiltExecutable(_ name: String, _ arguments: [String], in url: URL, input: Data = Data()) throws -> ToolRun {
    let process = Process()
    process.executableURL = try builtProduct(name)
    process.arguments = arguments
    process.currentDirectoryURL = url
    let io = URL(filePath: NSTemporaryDirectory()).appending(path: "featuregate-io-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: io, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: io) }
    let paths = ["in", "out", "err"].map { io.appending(path: $0) }
    try input.write(to: paths[0])
    for path in paths.dropFirst() { try Data().write(to: path) }
    let handles =
        try [FileHandle(forReadingFrom: paths[0])] + paths.dropFirst().map { try FileHandle(forWritingTo: $0) }
    defer { for handle in handles { try? handle.close() } }
    process.standardInput = handles[0]
    process.standardOutput = handles[1]
    process.standardError = handles[2]
    try process.run()
    process.waitUntilExit()
    return ToolRun(
        status: process.terminationStatus,
        output: String(decoding: try Data(contentsOf: paths[1]), as: UTF8.self),
        errorOutput: String(decoding: try Data(contentsOf: paths[2]), as: UTF8.self))
}

import Foundation
import PackageTestSupport

/// One run of an executable the package builds.
struct ToolRun {
    var status: Int32
    var output: String
    var errorOutput: String

    var lines: [String] { output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }

    /// The standard output parsed as one JSON object.
    func jsonObject() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any] ?? [:]
    }
}

/// Runs `featuregate` with `arguments` in `directory`.
func featuregate(_ arguments: [String], in directory: URL = packageRoot) throws -> ToolRun {
    try runBuiltExecutable("featuregate", arguments, in: directory)
}

/// Runs an executable of the package (found by `builtProduct`); output goes to files so it never blocks.
func runBuiltExecutable(_ name: String, _ arguments: [String], in directory: URL) throws -> ToolRun {
    let process = Process()
    process.executableURL = try builtProduct(name)
    process.arguments = arguments
    process.currentDirectoryURL = directory
    let io = URL(filePath: NSTemporaryDirectory()).appending(path: "featuregate-iab-io-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: io, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: io) }
    let out = io.appending(path: "out")
    let err = io.appending(path: "err")
    try Data().write(to: out)
    try Data().write(to: err)
    let outHandle = try FileHandle(forWritingTo: out)
    let errHandle = try FileHandle(forWritingTo: err)
    defer {
        try? outHandle.close()
        try? errHandle.close()
    }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = outHandle
    process.standardError = errHandle
    try process.run()
    process.waitUntilExit()
    return ToolRun(
        status: process.terminationStatus,
        output: String(decoding: try Data(contentsOf: out), as: UTF8.self),
        errorOutput: String(decoding: try Data(contentsOf: err), as: UTF8.self))
}

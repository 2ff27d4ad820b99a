#if os(macOS) || os(Linux)
import FeatureGate
import Foundation

/// One run of an executable the package builds: its exit status and what it printed.
public struct ToolRun: Sendable {
    /// The exit status, or the number of the signal that ended it.
    public var status: Int32
    /// Whether a signal ended it (a SIGKILL it sent itself, say) rather than an exit.
    public var wasSignalled: Bool
    /// Whether it ran past its time limit and was killed for it: a hang, which the caller reports.
    public var timedOut = false
    /// Everything written to standard output.
    public var output: String
    /// Everything written to standard error.
    public var errorOutput: String

    /// Standard output's lines, without the final newline's empty line.
    public var lines: [String] {
        output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// Standard error's lines, without the final newline's empty line.
    public var errorLines: [String] {
        errorOutput.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// Standard output parsed as one JSON object (empty when it is another JSON value).
    public func jsonObject() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any] ?? [:]
    }
}

/// Runs an executable of the package (found by ``builtProduct(_:)``) in the directory at `url`, feeding `input` on
/// standard input.
///
/// Standard input, output and error are files rather than pipes, so a large output can never block the child, and
/// the output is read once the child has exited: never waiting for the end of a pipe, which another child started
/// at the same moment may have inherited (`Process` closes the descriptors it knew of when it scanned them) and keep
/// open for as long as it lives. A child still running after `timeLimit` is killed (``ToolRun/timedOut``): a hang
/// fails its test instead of stalling the whole run.
public func runBuiltExecutable(
    _ name: String, _ arguments: [String], in url: URL, input: Data = Data(), timeLimit: Double = 120
) throws
    -> ToolRun
{
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
    let timedOut = LockedValue(false)
    let pid = process.processIdentifier
    let watchdog = DispatchWorkItem {
        timedOut.withLock { $0 = true }
        kill(pid, SIGKILL)
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit, execute: watchdog)
    process.waitUntilExit()
    watchdog.cancel()
    var run = ToolRun(
        status: process.terminationStatus,
        wasSignalled: process.terminationReason == .uncaughtSignal,
        output: String(decoding: try Data(contentsOf: paths[1]), as: UTF8.self),
        errorOutput: String(decoding: try Data(contentsOf: paths[2]), as: UTF8.self))
    run.timedOut = timedOut.withLock { $0 }
    return run
}
#endif

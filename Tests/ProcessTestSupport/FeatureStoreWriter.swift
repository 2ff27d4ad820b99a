#if os(macOS) || os(Linux)
import FeatureGate
import Foundation

/// Starts the `feature-store-writer` fixture (the child process of the multi-process tests) with `arguments`, its
/// standard output sent to `output` when given.
public func startFeatureStoreWriter(_ arguments: [String], output: Pipe? = nil) throws -> Process {
    let process = Process()
    process.executableURL = try builtProduct("feature-store-writer")
    process.arguments = arguments
    if let output { process.standardOutput = output }
    try process.run()
    return process
}

/// Runs `feature-store-writer takeaway DIRECTORY KIND` and kills it with SIGKILL as soon as it says its take-away
/// returned (`returned`), or after `turns` checks 5 ms apart. Returns whether it said so.
public func takeAwayAndKill(_ kind: String, in directory: URL, turns: Int = 4_000) throws -> Bool {
    let output = Pipe()
    let child = try startFeatureStoreWriter(["takeaway", directory.path(percentEncoded: false), kind], output: output)
    let said = LockedValue("")
    Thread.detachNewThread {
        let line = output.fileHandleForReading.readData(ofLength: 9)
        said.withLock { $0 = String(decoding: line, as: UTF8.self) }
    }
    var turn = 0
    while said.withLock({ $0 }) != "returned\n", turn < turns {
        usleep(5_000)
        turn += 1
    }
    kill(child.processIdentifier, SIGKILL)
    child.waitUntilExit()
    return said.withLock { $0 } == "returned\n"
}

/// Runs the `feature-store-writer` fixture with `arguments` to its end; returns its exit status.
public func runFeatureStoreWriter(_ arguments: [String]) throws -> Int32 {
    let process = try startFeatureStoreWriter(arguments)
    process.waitUntilExit()
    return process.terminationStatus
}
#endif

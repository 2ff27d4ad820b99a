#if os(macOS) || os(Linux)
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

/// Runs the `feature-store-writer` fixture with `arguments` to its end; returns its exit status.
public func runFeatureStoreWriter(_ arguments: [String]) throws -> Int32 {
    let process = try startFeatureStoreWriter(arguments)
    process.waitUntilExit()
    return process.terminationStatus
}
#endif

#if os(macOS) || os(Linux)
import Foundation
import ProcessTestSupport
import Testing

/// Starts the `feature-store-writer` fixture and waits until its first save, so a kill lands inside its loop.
func startFixture(mode: String, path: String, size: Int = 65_536) throws -> Process {
    let process = Process()
    process.executableURL = try builtProduct("feature-store-writer")
    process.arguments = [mode, path, String(size)]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let line = output.fileHandleForReading.readData(ofLength: 7)
    #expect(String(decoding: line, as: UTF8.self) == "saving\n")
    return process
}
#endif

import Foundation
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

/// An executable of the package, found in the directory the tests were built into.
///
/// That directory is found from the test binary itself, not from `CommandLine.arguments[0]`: on macOS `swift test`
/// runs the tests inside a runner (`xctest`, or the swift-testing helper) that lives in the toolchain, and loads
/// the binary from the `.xctest` bundle in the build directory. `FEATUREGATE_BUILT_PRODUCTS` (a directory)
/// overrides the search; `.build/debug` under the package root is the last resort. When the executable is in none
/// of these, the test fails with a message saying so: it never passes by skipping the check.
func builtProduct(_ name: String) throws -> URL {
    var directories: [URL] = []
    if let override = ProcessInfo.processInfo.environment["FEATUREGATE_BUILT_PRODUCTS"] {
        directories.append(URL(filePath: override, directoryHint: .isDirectory))
    }
    if let binary = testBinaryPath() {
        // Linux: .build/<triple>/debug/FeatureGatePackageTests.xctest (an executable);
        // macOS: .build/<triple>/debug/FeatureGatePackageTests.xctest/Contents/MacOS/FeatureGatePackageTests.
        var directory = URL(filePath: binary).deletingLastPathComponent()
        for _ in 0..<4 {
            directories.append(directory)
            directory.deleteLastPathComponent()
        }
    }
    directories.append(packageRoot.appending(path: ".build/debug", directoryHint: .isDirectory))
    for directory in directories {
        let candidate = directory.appending(path: name)
        if FileManager.default.isExecutableFile(atPath: candidate.path(percentEncoded: false)) { return candidate }
    }
    throw MissingBuiltProduct(name: name, searched: directories.map { $0.path(percentEncoded: false) })
}

/// The path of the binary that holds the tests.
private func testBinaryPath() -> String? {
    #if canImport(Darwin)
    // The image this code is in: the binary inside the .xctest bundle, whatever process loaded it.
    var info = Dl_info()
    if dladdr(#dsohandle, &info) != 0, let file = info.dli_fname { return String(cString: file) }
    return Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") }?.executablePath
    #else
    // On Linux the tests run in their own executable.
    return Bundle.main.executablePath ?? CommandLine.arguments.first
    #endif
}

/// A test needs an executable of the package that is not built.
struct MissingBuiltProduct: Error, CustomStringConvertible {
    var name: String
    var searched: [String]
    var description: String {
        "\(name) is not built: looked in \(searched.joined(separator: ", ")). Build it with "
            + "`swift build --build-tests` (swift test does), or set FEATUREGATE_BUILT_PRODUCTS to its directory."
    }
}

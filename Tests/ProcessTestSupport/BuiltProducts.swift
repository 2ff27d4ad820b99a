#if os(macOS) || os(Linux)
import Foundation
import PackageTestSupport

#if canImport(Darwin)
import Darwin
#endif

// Finding the package's built executables, for the tests that run them as child processes (macOS and Linux only).

/// An executable of the package, found in the directory the tests were built into.
///
/// That directory is found from the test binary itself, not from `CommandLine.arguments[0]`: on macOS `swift test`
/// runs the tests inside a runner (`xctest`, or the swift-testing helper) that lives in the toolchain, and loads
/// the binary from the `.xctest` bundle in the build directory. `FEATUREGATE_BUILT_PRODUCTS` (a directory)
/// overrides the search; `.build/debug` under the package root is the last resort. When the executable is in none
/// of these, the test fails with a message saying so: it never passes by skipping the check.
public func builtProduct(_ name: String) throws -> URL {
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
public struct MissingBuiltProduct: Error, CustomStringConvertible {
    /// The executable's name.
    public var name: String
    /// The directories searched, in order.
    public var searched: [String]
    /// What is missing and how to build it.
    public var description: String {
        "\(name) is not built: looked in \(searched.joined(separator: ", ")). Build it with "
            + "`swift build --build-tests` (swift test does), or set FEATUREGATE_BUILT_PRODUCTS to its directory."
    }
}
#endif

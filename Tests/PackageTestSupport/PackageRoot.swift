import Foundation

/// The package root, found from this file's path (Tests/PackageTestSupport/PackageRoot.swift).
public let packageRoot: URL = {
    var url = URL(filePath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url
}()

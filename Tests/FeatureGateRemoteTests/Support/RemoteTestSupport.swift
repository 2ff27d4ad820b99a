import FeatureGate
import FeatureGateRemote
import Foundation

/// A data directory in the temporary directory, removed by ``cleanUp()``.
struct RemoteTestDirectory {
    let url = FileManager.default.temporaryDirectory.appending(path: "remote-layer-\(UUID().uuidString)")
    var data: PrivacyDataDirectory { PrivacyDataDirectory(url: url) }
    var files: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: url.path())) ?? []).sorted() }

    func cleanUp() { try? FileManager.default.removeItem(at: url) }

    /// A manager on this directory's files, as an app launching with `appVersion` creates it.
    func launch(
        enabled: Feature = .all, appVersion: String = "1.0.3", platform: RemoteDataPlatform = .ios,
        diagnostics: DiagnosticLog? = nil
    ) -> PrivacyManager {
        let target = RemoteConfigTarget(platform: platform, sdkVersion: "17.2.0", appVersion: appVersion)
        var handler: (@Sendable (PrivacyManagerDiagnostic) -> Void)?
        if let diagnostics { handler = { diagnostics.append($0) } }
        return PrivacyManager(
            configuration: PrivacyConfiguration(enabledFeatures: enabled),
            store: FileFeatureStore(url: data.stateFile),
            remoteLayer: RemoteLayerFile(
                url: data.remoteLayerFile, interpreter: RemoteConfigInterpreter(target: target)),
            diagnosticHandler: handler)
    }
}

/// Collects a manager's diagnostics.
final class DiagnosticLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [PrivacyManagerDiagnostic] = []
    func append(_ diagnostic: PrivacyManagerDiagnostic) { lock.withLock { entries.append(diagnostic) } }
    var all: [PrivacyManagerDiagnostic] { lock.withLock { entries } }
}

enum Payloads {
    static func disabling(_ names: String...) -> Data {
        Data(#"{"disabled_features":[\#(names.map { "\"\($0)\"" }.joined(separator: ","))]}"#.utf8)
    }

    /// A response whose rule disables push for app versions 1.0.x on iOS.
    static let pushFor10 = Data(
        #"""
        {"ok":true,"payloads":[{"type":"app_config:ios","timestamp":"2024-05-01T10:00:00Z","data":{
          "disable_features":[{"modules":["push"],"sdk_versions":["17.+"],
            "app_versions":{"scope":["ios","version"],"value":{"version_matches":"1.0.+"}}}]}}]}
        """#.utf8)

    static let nothing = Data("{}".utf8)
    static let invalid = Data(#"{"disabled_features":["pushh"]}"#.utf8)
}

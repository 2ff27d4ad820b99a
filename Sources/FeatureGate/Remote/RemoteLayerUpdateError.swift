import Foundation

/// Why ``PrivacyManager/applyRemotePayload(_:entityTag:lastModified:)`` changed nothing.
public enum RemoteLayerUpdateError: Error, Sendable, CustomStringConvertible {
    /// The manager was created without a ``RemoteLayerFile``.
    case noRemoteLayer
    /// The payload is invalid (the interpreter's error, such as a `RemotePayloadError` naming the key path).
    case invalidPayload(any Error)
    /// No feature is enabled locally (with consent): a fully disabled gate keeps and writes nothing.
    case nothingEnabled

    /// What went wrong; the kept layer stays in every case.
    public var description: String {
        switch self {
        case .noRemoteLayer: "the manager has no remote layer file"
        case .invalidPayload(let error): "invalid payload: \(error)"
        case .nothingEnabled: "no feature is enabled locally; the payload was not kept"
        }
    }
}

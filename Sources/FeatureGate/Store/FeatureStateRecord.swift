import Foundation

/// Why a stored feature record could not be decoded.
public enum FeatureStateRecordError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes are not a JSON object with the expected fields. The payload says what was found.
    case malformed(found: String)
    /// The record was written by a newer version of the package.
    case unsupportedVersion(found: Int, supported: Int)

    /// What was found and what was expected.
    public var description: String {
        switch self {
        case .malformed(let found):
            "stored features are malformed: expected {\"version\": 1, \"enabledFeatures\": <bitmask>}, found \(found)"
        case .unsupportedVersion(let found, let supported):
            "stored features have version \(found): expected version \(supported) or lower"
        }
    }
}

/// The versioned encoding of the local feature set that every ``FeatureStore`` keeps.
///
/// Version 1 is a JSON object: `{"version":1,"enabledFeatures":21}`. The bitmask uses Airship's bit positions.
/// Later versions may add fields; a reader ignores fields it does not know, and refuses versions above its own.
public enum FeatureStateRecord {
    /// The version this build writes, and the highest it reads.
    public static let currentVersion = 1

    private struct Payload: Codable {
        var version: Int
        var enabledFeatures: UInt
    }

    private struct VersionOnly: Decodable {
        var version: Int
    }

    /// Encodes a local feature set.
    public static func encode(_ features: Feature) -> Data {
        Data(#"{"version":\#(currentVersion),"enabledFeatures":\#(features.rawValue)}"#.utf8)
    }

    /// Decodes a record. Bits outside any catalog are kept; the caller masks them.
    ///
    /// - Throws: ``FeatureStateRecordError`` for anything but a well-formed record of a supported version.
    public static func decode(_ data: Data) throws(FeatureStateRecordError) -> Feature {
        let decoder = JSONDecoder()
        let version: Int
        do {
            version = try decoder.decode(VersionOnly.self, from: data).version
        } catch {
            throw .malformed(found: summary(of: data))
        }
        guard version >= 1 else { throw .malformed(found: "version \(version)") }
        guard version <= currentVersion else {
            throw .unsupportedVersion(found: version, supported: currentVersion)
        }
        do {
            return Feature(rawValue: try decoder.decode(Payload.self, from: data).enabledFeatures)
        } catch {
            throw .malformed(found: summary(of: data))
        }
    }

    private static func summary(of data: Data) -> String {
        if data.isEmpty { return "an empty record" }
        let text = String(decoding: data.prefix(64), as: UTF8.self)
        return "\"\(text)\(data.count > 64 ? "…" : "")\" (\(data.count) bytes)"
    }
}

import Foundation

/// The last good server payload, as kept in the remote layer's file, with what a conditional request needs.
package struct RemoteLayerRecord: Sendable, Hashable {
    /// The payload's bytes, exactly as the server sent them.
    package var payload: Data
    /// The response's `ETag`, for `If-None-Match`.
    package var entityTag: String?
    /// The response's `Last-Modified`, for `If-Modified-Since`.
    package var lastModified: String?

    /// Creates a record.
    package init(payload: Data, entityTag: String? = nil, lastModified: String? = nil) {
        self.payload = payload
        self.entityTag = entityTag
        self.lastModified = lastModified
    }
}

/// Where a ``PrivacyManager`` keeps the server's kill switch, and how it reads the payload it keeps.
///
/// The file (``PrivacyDataDirectory/remoteLayerFile``) holds the last payload that was valid, never the user's or
/// the app's decisions. The manager reads it once, in `init`, so its flags are off from the first check of the
/// next launch, before anything is fetched; it replaces it (atomically: a crash leaves the old or the new
/// payload) only when a valid payload arrives while some feature is enabled locally.
///
/// Several processes on one directory each read the file at start-up and replace it whole; a running process sees
/// another's newer payload when it follows the directory
/// (``PrivacyManager/watchForChangesFromOtherProcesses(in:onLedgerChange:)``), otherwise at its next start
/// (or its own next fetch).
public struct RemoteLayerFile: Sendable, CustomStringConvertible {
    /// The largest file or payload read, 4 MiB: anything larger is refused (the kept layer stays, or, at start-up,
    /// every flag is disabled until a valid payload arrives).
    public static let maximumSize = 4 * 1024 * 1024

    /// The file.
    public let url: URL
    /// Reads the kept payload and each new one.
    public let interpreter: any RemotePayloadInterpreter

    /// Names the file and its interpreter. Touches nothing on disk.
    public init(url: URL, interpreter: any RemotePayloadInterpreter) {
        self.url = url
        self.interpreter = interpreter
    }

    /// The most the kept file may hold: the envelope stores the payload as a JSON string, whose escaping at most
    /// doubles a valid payload's text (`"`, `\\`, `/` and whitespace take two bytes), plus the envelope's own keys.
    static let maximumFileSize = 2 * maximumSize + 4096

    /// The file's path.
    public var description: String { url.path(percentEncoded: false) }

    /// Reads the kept record, or `nil` when there is none. Creates nothing.
    func load() throws(RemoteLayerFileError) -> RemoteLayerRecord? {
        let data: Data
        do {
            guard let read = try AtomicFile.read(at: url, limit: Self.maximumFileSize) else { return nil }
            data = read
        } catch {
            throw .unreadable(error)
        }
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: data), envelope.version == 1 else {
            throw .malformed
        }
        return RemoteLayerRecord(
            payload: Data(envelope.payload.utf8), entityTag: envelope.etag, lastModified: envelope.lastModified)
    }

    /// Replaces the file with `record`, crash-safely.
    func save(_ record: RemoteLayerRecord) throws {
        guard let text = String(data: record.payload, encoding: .utf8) else { throw RemoteLayerFileError.malformed }
        let envelope = Envelope(version: 1, etag: record.entityTag, lastModified: record.lastModified, payload: text)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try AtomicFile.write(encoder.encode(envelope), to: url)
    }

    /// `{"version":1,"etag":…,"lastModified":…,"payload":"<the payload's text>"}`.
    private struct Envelope: Codable {
        var version: Int
        var etag: String?
        var lastModified: String?
        var payload: String
    }
}

/// Why the kept remote layer could not be read.
package enum RemoteLayerFileError: Error, Sendable, CustomStringConvertible {
    /// The file exists but reading it failed.
    case unreadable(FileStoreError)
    /// The payload is larger than ``RemoteLayerFile/maximumSize``.
    case tooLarge(size: Int)
    /// The file is not a remote-layer record.
    case malformed

    /// What went wrong.
    package var description: String {
        switch self {
        case .unreadable(let error): "\(error)"
        case .tooLarge(let size): "\(size) bytes, more than the \(RemoteLayerFile.maximumSize) allowed"
        case .malformed: "not a remote-layer record {\"version\":1,\"payload\":…}"
        }
    }
}

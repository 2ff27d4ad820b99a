import Foundation

/// The last good server payload, as kept in the remote layer's file, with what a conditional request needs.
package struct RemoteLayerRecord: Sendable, Equatable {
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
/// payload) only when a valid payload arrives while some feature is enabled locally. When another process keeps
/// the directory's lock past the bound, the payload is made durable at once as an intent in the directory's
/// `.featuregate-intents` folder, which every start reads over the file and the lock's next holder writes into it.
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
        IntentJournal.register(.remote, file: url)
    }

    /// The most the kept file may hold: the envelope stores the payload as a JSON string, whose escaping at most
    /// doubles a valid payload's text (`"`, `\\`, `/` and whitespace take two bytes), plus the envelope's own keys.
    static let maximumFileSize = 2 * maximumSize + 4096

    /// The file's path.
    public var description: String { url.path(percentEncoded: false) }

    /// Reads the kept record, or `nil` when there is none: the file with the payloads not folded into it yet over it
    /// (``keptBytes(over:)``; `intents`: those already read, `nil`: read them). Creates nothing.
    func load(over intents: [TakeAwayIntent.RemoteIntent]? = nil) throws(RemoteLayerFileError) -> RemoteLayerRecord? {
        guard let data = try keptBytes(over: intents) else { return nil }
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: data), envelope.version == 1 else {
            throw .malformed
        }
        return RemoteLayerRecord(
            payload: Data(envelope.payload.utf8), entityTag: envelope.etag, lastModified: envelope.lastModified)
    }

    /// The file's bytes as the next holder of its directory's lock will leave them: with the payloads whose save
    /// another process's lock kept back (``IntentJournal``) folded over them, or `nil` when there is neither. Reads
    /// only; `intents` are the pending payloads already read (`nil`: read them).
    func keptBytes(over intents: [TakeAwayIntent.RemoteIntent]? = nil) throws(RemoteLayerFileError) -> Data? {
        let data: Data?
        do {
            data = try AtomicFile.read(at: url, limit: Self.maximumFileSize)
        } catch {
            throw .unreadable(error)
        }
        let intents = intents ?? pendingIntents()
        guard !intents.isEmpty else { return data }
        let folded = Self.folding(intents, over: data ?? Data())
        return folded.isEmpty && data == nil ? nil : folded
    }

    /// The payloads kept as intents for this file and not folded into it yet, oldest first. Reads only.
    func pendingIntents() -> [TakeAwayIntent.RemoteIntent] {
        let location = FileLocation(file: url)
        return IntentJournal.pending(in: location.anchor).compactMap(\.remote).filter {
            $0.file == location.components[0]
        }
    }

    /// Replaces the file with `record`, crash-safely.
    func save(_ record: RemoteLayerRecord) throws {
        try AtomicFile.write(Self.encoded(record), to: url)
    }

    /// The file's bytes for `record`: `{"version":1,…}` with sorted keys, so one record always gives the same bytes.
    package static func encoded(_ record: RemoteLayerRecord) throws -> Data {
        guard let text = String(data: record.payload, encoding: .utf8) else { throw RemoteLayerFileError.malformed }
        let envelope = Envelope(version: 1, etag: record.entityTag, lastModified: record.lastModified, payload: text)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(envelope)
    }

    /// What a payload kept as an intent names the file it replaces by (``TakeAwayIntent/RemoteIntent/base``): the
    /// `fnv1a64:` digest of its bytes (no file: of no bytes).
    package static func digest(of data: Data) -> String {
        var digest = ConsentLedgerDigest()
        data.withUnsafeBytes { digest.add($0) }
        return digest.encoded
    }

    /// `data` (the file's bytes) with `intents` (of this file, oldest first) folded over it: each replaces the bytes
    /// it was recorded over, or what an earlier one of them left over those bytes, and nothing else. So a payload
    /// kept since by another process is not overwritten by an older one, and of two payloads recorded over the same
    /// bytes (two processes behind one busy lock) the one recorded later wins. Folding the same intents again changes
    /// nothing.
    package static func folding(_ intents: [TakeAwayIntent.RemoteIntent], over data: Data) -> Data {
        // The bytes the file had, or would have had, before each intent folded so far: an intent recorded over any of
        // them was recorded after the ones that made them, whatever it saw.
        var passed: Set<String> = [digest(of: data)]
        return intents.reduce(data) { current, intent in
            guard passed.contains(intent.base), let next = try? encoded(intent.record) else { return current }
            passed.insert(digest(of: next))
            return next
        }
    }

    /// `{"version":1,"etag":…,"lastModified":…,"payload":"<the payload's text>"}`.
    private struct Envelope: Codable {
        var version: Int
        var etag: String?
        var lastModified: String?
        var payload: String

        init(version: Int, etag: String?, lastModified: String?, payload: String) {
            self.version = version
            self.etag = etag
            self.lastModified = lastModified
            self.payload = payload
        }

        // Written out with the shared ``JSONKey``, as a synthesized conformance would: optionals only when present.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: JSONKey.self)
            version = try container.decode(Int.self, forKey: "version")
            etag = try container.decodeIfPresent(String.self, forKey: "etag")
            lastModified = try container.decodeIfPresent(String.self, forKey: "lastModified")
            payload = try container.decode(String.self, forKey: "payload")
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: JSONKey.self)
            try container.encode(version, forKey: "version")
            try container.encodeIfPresent(etag, forKey: "etag")
            try container.encodeIfPresent(lastModified, forKey: "lastModified")
            try container.encode(payload, forKey: "payload")
        }
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

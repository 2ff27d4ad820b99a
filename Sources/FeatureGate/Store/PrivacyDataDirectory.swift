import Foundation

/// The names of FeatureGate's own files in an SDK's data directory, so the SDK, its tests and revoke-all's
/// promise agree on them.
///
/// | file | holds | after revoke-all |
/// |---|---|---|
/// | `featuregate-state.json` | the gate's decided flags and consent refusals (``FileFeatureStore``), and an unfinished revoke-all (`pendingRevocation`) | kept: every feature off; the identifier to erase only while its erasure request is still owed |
/// | `consent-ledger.jsonl` | the consent audit trail (``FileConsentLedger``) | kept, with the revocation recorded |
/// | `consent-ledger.jsonl.checkpoint` | the audit trail folded up to a point, so start-up reads only what follows it (``FileConsentLedger/checkpointURL``) | kept, in step with the ledger |
/// | `anonymous-id` | the ``AnonymousIdentifier`` | deleted |
/// | `featuregate-remote.json` | the server's last valid kill-switch payload (``RemoteLayerFile``), if any | kept: it holds no personal data |
/// | `.featuregate.lock` | nothing: the lock processes sharing the directory take before they write | kept |
/// | `.featuregate-intents/` | take-aways (a disable, a consent refusal, revoke-all's pending record) made durable while another process kept the lock; exists only until the next holder of the lock folds them into the state and the ledger | folded, then removed |
/// | `featuregate-age.json` | the last declared age range (``FileAgeRangeAnswerStore``), if an app asked for one | kept: a child stays marked a child (fail closed) |
///
/// Keep the SDK's own files (queues, caches, registrations) in subdirectories its subsystems purge: after
/// revoke-all the directory then holds only ``retainedFileNames`` and, once a server payload was kept,
/// `featuregate-remote.json` (``remoteLayerFileName``), and, once an age answer was kept, `featuregate-age.json`.
///
/// A value of this type only computes URLs: it creates, reads and writes nothing.
public struct PrivacyDataDirectory: Sendable, Hashable, CustomStringConvertible {
    /// `featuregate-state.json`: the gate's persisted state, a `FeatureStateRecord` in JSON.
    public static let stateFileName = "featuregate-state.json"
    /// `consent-ledger.jsonl`: the consent audit trail, one JSON object per line.
    public static let consentLedgerFileName = "consent-ledger.jsonl"
    /// `consent-ledger.jsonl.checkpoint`: the consent ledger folded up to a point, written with each append, so
    /// that start-up reads only the lines after that point (``FileConsentLedger/checkpointURL``).
    public static let consentLedgerCheckpointFileName = consentLedgerFileName + FileConsentLedger.checkpointSuffix
    /// `anonymous-id`: the anonymous identifier, a UUID string; exists only while some feature is enabled.
    public static let anonymousIdentifierFileName = "anonymous-id"
    /// `featuregate-remote.json`: the remote layer, the last valid server payload; written only while a feature is on.
    public static let remoteLayerFileName = "featuregate-remote.json"
    /// `.featuregate.lock`: the inter-process lock file, created the first time anything is written or deleted in
    /// the directory. It holds nothing and is never deleted.
    public static let lockFileName = AtomicFile.lockFileName
    /// The files revoke-all always leaves in the directory: the lock file, the gate's state, the consent ledger and
    /// its checkpoint, sorted. The remote layer (``remoteLayerFileName``) is left too when a server payload was ever
    /// kept: it holds no personal data.
    public static let retainedFileNames = [
        lockFileName, consentLedgerFileName, consentLedgerCheckpointFileName, stateFileName,
    ]

    /// The directory.
    public let url: URL

    /// Names the files under `url`. Touches nothing on disk.
    public init(url: URL) {
        self.url = url
    }

    /// The gate's state file, for a ``FileFeatureStore``.
    public var stateFile: URL { url.appending(path: Self.stateFileName, directoryHint: .notDirectory) }
    /// The consent ledger, for a ``FileConsentLedger``.
    public var consentLedgerFile: URL { url.appending(path: Self.consentLedgerFileName, directoryHint: .notDirectory) }
    /// The anonymous identifier's file, for an ``AnonymousIdentifier``.
    public var anonymousIdentifierFile: URL {
        url.appending(path: Self.anonymousIdentifierFileName, directoryHint: .notDirectory)
    }

    /// The remote layer's file, for a ``RemoteLayerFile``.
    public var remoteLayerFile: URL { url.appending(path: Self.remoteLayerFileName, directoryHint: .notDirectory) }

    /// The directory's path.
    public var description: String { url.path(percentEncoded: false) }
}

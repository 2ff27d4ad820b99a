import Foundation

/// A take-away (a disable, a consent refusal, revoke-all's pending record, the kill switch) made durable without the
/// data directory's lock, because another process kept it past the bound: one file of ``IntentJournal``, folded into
/// the gate state, the ledger and the remote layer's file by the next holder of the lock and read over them by every
/// start.
///
/// Over the gate state it only ever takes away: folded over any record, it decides flags off, adds refusals, appends
/// records and joins a pending revocation. A server payload replaces the kept one only if that is still the one it
/// replaced when it was recorded (``RemoteIntent/base``), so an older payload never overwrites a newer one. Folding it
/// twice (a crash between the fold's writes and the intent's removal) changes nothing the first fold did not.
package struct TakeAwayIntent: Sendable, Equatable, Codable {
    /// The intent format this build writes and reads: ``version`` of every intent it records.
    package static let currentVersion = 1

    /// The format of the intent. One from a newer build is never folded or deleted by this one, and a start that
    /// finds one holds every flag off (its take-aways cannot be read).
    package var version: Int
    /// The gate state's file name in the directory, when the intent changes it.
    package var stateFile: String?
    /// The consent ledger's file name in the directory, when ``records`` go into it.
    package var ledgerFile: String?
    /// The flags decided off (raw bits, Airship's positions).
    package var disable: UInt
    /// The consent categories refused.
    package var refuse: [ConsentCategory]
    /// The ledger records of the change, oldest first.
    package var records: [ConsentRecord]
    /// Revoke-all's pending record: every flag the record has on goes off too.
    package var pendingRevocation: PendingRevocation?
    /// A server payload (the kill switch) to keep in the remote layer's file.
    package var remote: RemoteIntent?

    /// A server payload in force whose file another process's lock kept from being written.
    package struct RemoteIntent: Sendable, Equatable, Codable {
        /// The remote layer's file name in the directory.
        package var file: String
        /// The digest (``RemoteLayerFile/digest(of:)``) of the kept file as this process saw it, the intents before
        /// this one folded over it: the payload replaces that and nothing else.
        package var base: String
        /// The payload's bytes.
        package var payload: Data
        /// The response's `ETag`.
        package var entityTag: String?
        /// The response's `Last-Modified`.
        package var lastModified: String?

        /// The payload to keep.
        package var record: RemoteLayerRecord {
            RemoteLayerRecord(payload: payload, entityTag: entityTag, lastModified: lastModified)
        }

        package init(file: String, base: String, record: RemoteLayerRecord) {
            self.file = file
            self.base = base
            self.payload = record.payload
            self.entityTag = record.entityTag
            self.lastModified = record.lastModified
        }

        /// Decodes the payload as a synthesized conformance would, with the shared ``JSONKey``.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: JSONKey.self)
            file = try container.decode(String.self, forKey: "file")
            base = try container.decode(String.self, forKey: "base")
            payload = try container.decode(Data.self, forKey: "payload")
            entityTag = try container.decodeIfPresent(String.self, forKey: "entityTag")
            lastModified = try container.decodeIfPresent(String.self, forKey: "lastModified")
        }

        /// Encodes the payload as a synthesized conformance would, with the shared ``JSONKey``.
        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: JSONKey.self)
            try container.encode(file, forKey: "file")
            try container.encode(base, forKey: "base")
            try container.encode(payload, forKey: "payload")
            try container.encodeIfPresent(entityTag, forKey: "entityTag")
            try container.encodeIfPresent(lastModified, forKey: "lastModified")
        }
    }

    package init(
        stateFile: String?, ledgerFile: String? = nil, disable: Feature = [], refuse: Set<ConsentCategory> = [],
        records: [ConsentRecord] = [], pendingRevocation: PendingRevocation? = nil, remote: RemoteIntent? = nil
    ) {
        self.version = Self.currentVersion
        self.stateFile = stateFile
        self.ledgerFile = ledgerFile
        self.disable = disable.rawValue
        self.refuse = refuse.sortedByName()
        self.records = records
        self.pendingRevocation = pendingRevocation
        self.remote = remote
    }

    /// Decodes an intent; one without a version is of the first format.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        version = try container.decodeIfPresent(Int.self, forKey: "version") ?? 1
        stateFile = try container.decodeIfPresent(String.self, forKey: "stateFile")
        ledgerFile = try container.decodeIfPresent(String.self, forKey: "ledgerFile")
        disable = try container.decodeIfPresent(UInt.self, forKey: "disable") ?? 0
        refuse = try container.decodeIfPresent([ConsentCategory].self, forKey: "refuse") ?? []
        records = try container.decodeIfPresent([ConsentRecord].self, forKey: "records") ?? []
        pendingRevocation = try container.decodeIfPresent(PendingRevocation.self, forKey: "pendingRevocation")
        remote = try container.decodeIfPresent(RemoteIntent.self, forKey: "remote")
    }

    /// Encodes the intent: every field, the optional ones only when present (as a synthesized conformance would, with
    /// the shared ``JSONKey``).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        try container.encode(version, forKey: "version")
        try container.encodeIfPresent(stateFile, forKey: "stateFile")
        try container.encodeIfPresent(ledgerFile, forKey: "ledgerFile")
        try container.encode(disable, forKey: "disable")
        try container.encode(refuse, forKey: "refuse")
        try container.encode(records, forKey: "records")
        try container.encodeIfPresent(pendingRevocation, forKey: "pendingRevocation")
        try container.encodeIfPresent(remote, forKey: "remote")
    }

    /// Whether a build of this version can fold it: one from a newer build may take away what this one cannot read.
    package var isReadable: Bool { version <= Self.currentVersion }

    /// Whether it takes nothing away and records nothing.
    package var isEmpty: Bool {
        disable == 0 && refuse.isEmpty && records.isEmpty && pendingRevocation == nil && remote == nil
    }

    /// `record` with this take-away made over it.
    package func applied(to record: FeatureStateRecord) -> FeatureStateRecord {
        var result = record
        var off = Feature(rawValue: disable)
        if let pending = pendingRevocation {
            // As revoke-all's locked write: every flag the record has on is decided off, the catalog's included.
            off.formUnion(result.enabledFeatures)
            result.pendingRevocation =
                result.pendingRevocation.map { $0.requestKey == pending.requestKey ? $0 : $0.joined(by: pending) }
                ?? pending
        }
        result.decidedFeatures.formUnion(off)
        result.enabledFeatures.subtract(off)
        // What it decides off owes its subsystems' purge, as a save that decides it off records.
        result.purgeOwedFeatures.formUnion(FeatureStateRecord.newlyDecidedOff(from: record, to: result))
        result.deniedConsentCategories.formUnion(refuse)
        // As revoke-all's locked write, too: every flag it decided off is the user's refusal, which a reset keeps.
        if pendingRevocation != nil { result.revokedFeatures = result.decidedFeatures }
        return result
    }

    /// The intent's JSON.
    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Strings, integers, dates and UUIDs always encode.
        return (try? encoder.encode(self)) ?? Data()
    }
}

import Foundation

/// The gate's persisted state: which flags were decided and how, and which consent categories were refused.
///
/// Every ``FeatureStore`` keeps one record, encoded as JSON:
///
/// - Version 2 (written by this build):
///   `{"decidedFeatures":20,"deniedConsentCategories":["advertising"],"enabledFeatures":16,"version":2}`.
///   A flag in `decidedFeatures` keeps its decision (on when it is also in `enabledFeatures`); any other flag is
///   undecided and follows the configuration, so an app update's new defaults apply to it.
///   `deniedConsentCategories` keeps every consent category refused through ``ConsentManager``, so that a denial
///   the consent ledger could not record still holds after a relaunch.
/// - Version 1 (`{"version":1,"enabledFeatures":21}`) reads as *every flag decided*, so upgrading never turns on
///   a flag that was off.
///
/// A version 2 record may also hold `"pendingRevocation":{...}` (`PendingRevocation`) while a revoke-all
/// is unfinished, and `"revokedFeatures":<bitmask>` once a revoke-all decided flags off that nobody has turned on
/// since, and `"purgeOwedFeatures":<bitmask>` while a "no" owes its subsystems' purge; each is written only then.
///
/// Bitmasks use Airship's bit positions. A reader ignores fields it does not know and refuses versions above its
/// own.
package struct FeatureStateRecord: Sendable, Equatable {
    /// The version this build writes, and the highest it reads.
    package static let currentVersion = 2

    /// Every bit: what a version 1 record, which predates undecided flags, reads as decided.
    package static let everyFlag = Feature(rawValue: .max)

    /// The decided flags that are on. Always a subset of ``decidedFeatures``.
    package var enabledFeatures: Feature
    /// The flags someone decided; the rest follow the configuration.
    package var decidedFeatures: Feature
    /// The consent categories last refused (denied or restricted) through ``ConsentManager``.
    package var deniedConsentCategories: Set<ConsentCategory>
    /// The revoke-all that began and has not finished, if any (key `pendingRevocation`, written only when there is
    /// one). Saves that do not change it keep the stored one.
    package var pendingRevocation: PendingRevocation?
    /// The flags a revoke-all decided off that nobody has turned on since (key `revokedFeatures`, written only when
    /// there are any). Revoke-all is the user's refusal: `resetEnabledFeatures` keeps these flags decided off, as it
    /// keeps consent refusals. Always a subset of ``decidedFeatures`` and disjoint from ``enabledFeatures``.
    package var revokedFeatures: Feature {
        get { revoked.intersection(decidedFeatures).subtracting(enabledFeatures) }
        set { revoked = newValue.intersection(decidedFeatures).subtracting(enabledFeatures) }
    }
    private var revoked: Feature = []
    /// How far into the consent ledger (its length in bytes) the record reflects: written by each consent change
    /// with the ledger's length after its record, and by every save of a process whose consent manager started on
    /// the file ledger from a known point (key `ledgerLength`, only once known). A start that finds the ledger
    /// longer applies the records after this point, as a journal replays committed records.
    package var ledgerLength: Int?
    /// The flags a "no" switched off whose subsystems' purge is not known to be done (key `purgeOwedFeatures`,
    /// written only when there are any): every save that decides a flag off adds it, in the same write, and a
    /// runtime that purged the flag's subsystems removes it. A start finds here what a kill between a "no" and its
    /// purge left: `SubsystemRuntime.start()` purges those subsystems before anything else.
    package var purgeOwedFeatures: Feature = []

    /// Creates a record. `enabledFeatures` is limited to `decidedFeatures`.
    ///
    /// - Parameters:
    ///   - enabledFeatures: The decided flags that are on.
    ///   - decidedFeatures: The decided flags; the default, every flag, describes a whole set chosen at once.
    ///   - deniedConsentCategories: The refused consent categories.
    package init(
        enabledFeatures: Feature,
        decidedFeatures: Feature = everyFlag,
        deniedConsentCategories: Set<ConsentCategory> = []
    ) {
        self.enabledFeatures = enabledFeatures.intersection(decidedFeatures)
        self.decidedFeatures = decidedFeatures
        self.deniedConsentCategories = deniedConsentCategories
    }

    /// What a `resetEnabledFeatures` launch keeps of this record: every flag undecided except those revoke-all
    /// decided off, which stay off, and every consent refusal. The pending revocation, if any, is not kept: a
    /// record with one is not reset.
    package var reset: FeatureStateRecord {
        var kept = FeatureStateRecord(
            enabledFeatures: [], decidedFeatures: revokedFeatures, deniedConsentCategories: deniedConsentCategories)
        kept.revokedFeatures = revokedFeatures
        kept.purgeOwedFeatures = purgeOwedFeatures
        return kept
    }

    /// `self`, a record just read from the store, with the change from `before` to `after` made over it: the flags
    /// whose decision or value differ between those two, and the refusals one of them has and the other has not,
    /// take `after`'s state; every other flag and refusal stays as in `self`, including the bits of flags the
    /// writer's catalog does not know.
    ///
    /// This is how a process saves without erasing what another process saved since it read the record.
    package func merging(changeFrom before: FeatureStateRecord, to after: FeatureStateRecord) -> FeatureStateRecord {
        let changed = before.decidedFeatures.symmetricDifference(after.decidedFeatures)
            .union(before.enabledFeatures.symmetricDifference(after.enabledFeatures))
        let decided = decidedFeatures.subtracting(changed).union(after.decidedFeatures.intersection(changed))
        let enabled = enabledFeatures.subtracting(changed).union(after.enabledFeatures.intersection(changed))
        let refused = after.deniedConsentCategories.subtracting(before.deniedConsentCategories)
        let unrefused = before.deniedConsentCategories.subtracting(after.deniedConsentCategories)
        var merged = FeatureStateRecord(
            enabledFeatures: enabled,
            decidedFeatures: decided,
            deniedConsentCategories: deniedConsentCategories.union(refused).subtracting(unrefused)
        )
        let revokedChanged = changed.union(before.revokedFeatures.symmetricDifference(after.revokedFeatures))
        merged.revokedFeatures = revokedFeatures.subtracting(revokedChanged)
            .union(after.revokedFeatures.intersection(revokedChanged))
        merged.pendingRevocation =
            before.pendingRevocation == after.pendingRevocation ? pendingRevocation : after.pendingRevocation
        merged.ledgerLength = ledgerLength
        merged.purgeOwedFeatures = purgeOwedFeatures
        return merged
    }

    /// The flags `after` has decided off that `before` had not: what a save from `before` to `after` owes a purge.
    package static func newlyDecidedOff(from before: FeatureStateRecord, to after: FeatureStateRecord) -> Feature {
        after.decidedFeatures.subtracting(after.enabledFeatures)
            .subtracting(before.decidedFeatures.subtracting(before.enabledFeatures))
    }

    /// The record as JSON, keys and categories sorted, so equal records encode to equal bytes.
    ///
    /// The bytes are what `JSONEncoder` with sorted keys writes, built directly: the manager saves on every
    /// decision, and an encoder there cost about 6 µs and 13 allocations per toggle. Only category names, which
    /// may need escaping, go through the encoder, and only when there are any.
    package func encoded() -> Data {
        var categories = "[]"
        if !deniedConsentCategories.isEmpty {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .withoutEscapingSlashes
            // An array of strings always encodes.
            let names = (try? encoder.encode(deniedConsentCategories.map(\.rawValue).sorted(byName: \.self))) ?? Data()
            categories = String(decoding: names, as: UTF8.self)
        }
        let (decided, enabled, version) = (decidedFeatures.rawValue, enabledFeatures.rawValue, Self.currentVersion)
        let pending = pendingRevocation.map {
            #""pendingRevocation":\#(String(decoding: $0.encoded(), as: UTF8.self)),"#
        }
        let length = ledgerLength.map { #""ledgerLength":\#($0),"# }
        let revoked = revokedFeatures.isEmpty ? "" : #""revokedFeatures":\#(revokedFeatures.rawValue),"#
        let owed = purgeOwedFeatures.isEmpty ? "" : #""purgeOwedFeatures":\#(purgeOwedFeatures.rawValue),"#
        let json = #"""
            {"decidedFeatures":\#(decided),"deniedConsentCategories":\#(categories),\#
            "enabledFeatures":\#(enabled),\#(length ?? "")\#(pending ?? "")\#(owed)\#(revoked)"version":\#(version)}
            """#
        return Data(json.utf8)
    }

    /// Decodes a record of any supported version. Bits outside any catalog are kept; the caller masks them.
    ///
    /// - Throws: ``PrivacyManagerDiagnostic/StoredStateError`` for anything but a well-formed record of a supported version.
    package init(decoding data: Data) throws(PrivacyManagerDiagnostic.StoredStateError) {
        // Read with the package's own JSON reader, as `JSONDecoder` would read the record's fields: one launch read
        // cost about 150 allocations through the decoder (issue 47). A record that is not a whole, well-typed one is
        // still read for its version alone, so that a newer version's record is told apart from a malformed one.
        let json = JSONValue(parsing: data)
        guard let json, let payload = Payload(json) else {
            guard let version = json?["version"]?.integer(Int.self) else {
                throw .malformed(found: Self.summary(of: data))
            }
            try Self.check(version)
            throw .malformed(found: Self.summary(of: data))
        }
        let version = payload.version
        try Self.check(version)
        if version == 1 {
            self.init(enabledFeatures: Feature(rawValue: payload.enabledFeatures))
            return
        }
        guard let decided = payload.decidedFeatures, let denied = payload.deniedConsentCategories else {
            throw .malformed(found: Self.summary(of: data))
        }
        self.init(
            enabledFeatures: Feature(rawValue: payload.enabledFeatures),
            decidedFeatures: Feature(rawValue: decided),
            deniedConsentCategories: Set(denied)
        )
        pendingRevocation = payload.pendingRevocation
        ledgerLength = payload.ledgerLength.flatMap { $0 >= 0 ? $0 : nil }
        revokedFeatures = Feature(rawValue: payload.revokedFeatures ?? 0)
        purgeOwedFeatures = Feature(rawValue: payload.purgeOwedFeatures ?? 0)
    }

    /// The record's fields, each of the type it must have (absent or `null` where it may be missing).
    private struct Payload {
        var version: Int
        var enabledFeatures: UInt
        var decidedFeatures: UInt?
        var deniedConsentCategories: [ConsentCategory]?
        var pendingRevocation: PendingRevocation?
        var ledgerLength: Int?
        var revokedFeatures: UInt?
        var purgeOwedFeatures: UInt?

        /// `nil` when a field is missing or of another type.
        init?(_ json: JSONValue) {
            guard case .object = json, let version = json["version"]?.integer(Int.self),
                let enabled = json["enabledFeatures"]?.integer(UInt.self),
                let decided = json.optional("decidedFeatures", { $0.integer(UInt.self) }),
                let denied = json.optional(
                    "deniedConsentCategories",
                    { value in
                        value.array.flatMap { names in
                            let categories = names.compactMap { $0.string.map(ConsentCategory.init(rawValue:)) }
                            return categories.count == names.count ? categories : nil
                        }
                    }),
                let pending = json.optional("pendingRevocation", PendingRevocation.init(json:)),
                let length = json.optional("ledgerLength", { $0.integer(Int.self) }),
                let revoked = json.optional("revokedFeatures", { $0.integer(UInt.self) }),
                let owed = json.optional("purgeOwedFeatures", { $0.integer(UInt.self) })
            else { return nil }
            (self.version, enabledFeatures, decidedFeatures, deniedConsentCategories) = (
                version, enabled, decided, denied
            )
            (pendingRevocation, ledgerLength, revokedFeatures, purgeOwedFeatures) = (pending, length, revoked, owed)
        }
    }

    /// Refuses a version this build does not read.
    private static func check(_ version: Int) throws(PrivacyManagerDiagnostic.StoredStateError) {
        guard version >= 1 else { throw .malformed(found: "version \(version)") }
        guard version <= Self.currentVersion else {
            throw .unsupportedVersion(found: version, supported: Self.currentVersion)
        }
    }

    private static func summary(of data: Data) -> String {
        if data.isEmpty { return "an empty record" }
        let text = UntrustedText.escaped(String(decoding: data.prefix(64), as: UTF8.self), limit: .max)
        return "\"\(text)\(data.count > 64 ? "…" : "")\" (\(data.count) bytes)"
    }
}

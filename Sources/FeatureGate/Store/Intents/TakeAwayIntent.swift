import Foundation

/// A take-away (a disable, a consent refusal, revoke-all's pending record) made durable without the data
/// directory's lock, because another process kept it past the bound: one file of ``IntentJournal``, folded into the
/// gate state and the ledger by the next holder of the lock and read over them by every start.
///
/// It only ever takes away: folded over any record, it decides flags off, adds refusals, appends records and joins
/// a pending revocation. Folding it twice (a crash between the fold's writes and the intent's removal) changes
/// nothing the first fold did not.
package struct TakeAwayIntent: Sendable, Hashable, Codable {
    /// The gate state's file name in the directory.
    package var stateFile: String
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

    package init(
        stateFile: String, ledgerFile: String? = nil, disable: Feature = [], refuse: Set<ConsentCategory> = [],
        records: [ConsentRecord] = [], pendingRevocation: PendingRevocation? = nil
    ) {
        self.stateFile = stateFile
        self.ledgerFile = ledgerFile
        self.disable = disable.rawValue
        self.refuse = refuse.sorted()
        self.records = records
        self.pendingRevocation = pendingRevocation
    }

    /// Whether it takes nothing away and records nothing.
    package var isEmpty: Bool { disable == 0 && refuse.isEmpty && records.isEmpty && pendingRevocation == nil }

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

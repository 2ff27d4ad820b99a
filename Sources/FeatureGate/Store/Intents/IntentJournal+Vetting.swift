import Foundation

/// What an intent read back from disk may do: an intent is input like any file, so the names it gives and the
/// records it carries are checked before anything follows them.
///
/// An intent names files only as one plain file name of its own directory, each for its own role: the gate state,
/// the ledger, the remote layer's file (the package's names, or those of a store, ledger or layer this process
/// created). An intent naming anything else (a separator, `..`, a hidden or other name) is unreadable: skipped,
/// reported, never followed. It carries only take-aways: a record that gives (a grant, a reset to unknown) is ignored
/// and reported, unless a refusal of the same category, made no earlier, follows it in the same intent (a grant
/// held before a refusal is recorded with it, so the ledger keeps the order the user answered in and ends refused).
extension IntentJournal {
    /// What an intent names a file for.
    package enum Role: String, Sendable {
        case state = "gate state"
        case ledger = "ledger"
        case remote = "remote layer"

        /// The file name the package gives this role in a data directory (``PrivacyDataDirectory``).
        var standardName: String {
            switch self {
            case .state: PrivacyDataDirectory.stateFileName
            case .ledger: PrivacyDataDirectory.consentLedgerFileName
            case .remote: PrivacyDataDirectory.remoteLayerFileName
            }
        }
    }

    /// The file names other than the standard ones that this process's stores, ledgers and remote layers use, per
    /// role and directory: an intent may name them too.
    private static let ownFiles = LockedValue<[OwnFileKey: Set<String>]>([:])

    private struct OwnFileKey: Hashable {
        let role: Role
        let anchor: String
    }

    /// Notes that this process keeps the file at `url` in the role `role`, so that intents naming it are folded
    /// (called when a file store, a file ledger or a remote layer is created; touches nothing on disk).
    package static func register(_ role: Role, file url: URL) {
        register(role, at: FileLocation(file: url))
    }

    /// Registers the file at `location`, as ``register(_:file:)`` does.
    package static func register(_ role: Role, at location: FileLocation) {
        guard let name = location.components.last, name != role.standardName, isPlainName(name) else { return }
        ownFiles.withLock { $0[OwnFileKey(role: role, anchor: location.anchor), default: []].insert(name) }
    }

    /// Whether `name` is one path component that names an ordinary entry: not empty, no separator, not `.` or `..`,
    /// not hidden (the package's own machinery is), no NUL.
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && !name.contains("/") && !name.contains("\0")
    }

    /// Why `name` may not be followed as the file of `role` in the directory `anchor`; `nil` when it may.
    static func problem(with name: String, as role: Role, in anchor: String) -> String? {
        guard isPlainName(name) else {
            return "names \(quoted(name)) as its \(role.rawValue): expected one plain file name of its own directory"
        }
        guard
            name == role.standardName
                || ownFiles.withLock({ $0[OwnFileKey(role: role, anchor: anchor)]?.contains(name) ?? false })
        else {
            return "names \(quoted(name)) as its \(role.rawValue): expected \(quoted(role.standardName)) "
                + "or the name of a \(role.rawValue) file this process keeps in the directory"
        }
        return nil
    }

    /// `intent` as it may be taken in the directory `anchor`: `nil` when it names a file it may not (the first
    /// reason says why), else with every record that would give left out (each reason says which).
    static func vetted(_ intent: TakeAwayIntent, in anchor: String) -> (intent: TakeAwayIntent?, reasons: [String]) {
        let names: [(String?, Role)] = [
            (intent.stateFile, .state), (intent.ledgerFile, .ledger), (intent.remote?.file, .remote),
        ]
        for case (let name?, let role) in names {
            if let problem = problem(with: name, as: role, in: anchor) { return (nil, [problem]) }
        }
        var vetted = intent
        var reasons: [String] = []
        vetted.records = intent.records.enumerated().compactMap { index, record in
            if record.newStatus.isRefusal { return record }
            let refusedAfter = intent.records[(index + 1)...].contains {
                $0.category == record.category && $0.newStatus.isRefusal && $0.time >= record.time
            }
            if refusedAfter { return record }
            reasons.append(
                "carries a record of \(record.category) as \(record.newStatus.rawValue): an intent only "
                    + "takes away (a refusal, a disable, revoke-all's record, a payload)")
            return nil
        }
        return (vetted, reasons)
    }

    private static func quoted(_ name: String) -> String { "\"" + UntrustedText.escaped(name) + "\"" }
}

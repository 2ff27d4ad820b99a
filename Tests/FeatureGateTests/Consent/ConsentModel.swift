import FeatureGate

/// A pure reference model of how the gate decides (`effective = local ∩ permitted − remoteDisabled`), written from
/// the rules in DESIGN.md and issue 10 rather than from the implementation. The model-based tests apply the same
/// steps to it and to the real managers, and compare them after every step.
struct ConsentModel {
    /// What outlives a launch: the gate's stored record, the consent ledger, the system's ATT status.
    enum StoredRecord: Equatable {
        case none
        case corrupt
        case record(Record)
    }

    struct Record: Equatable {
        var decided: Feature = []
        var values: Feature = []
        var denied: Set<ConsentCategory> = []
    }

    struct LedgerEntry: Equatable {
        var category: ConsentCategory
        var status: ConsentStatus
        var policyVersion: Int
        var source: ConsentSource
    }

    enum Decider: Equatable {
        case app
        case consent(ConsentCategory)
    }

    static let categories: [ConsentCategory] = [.advertising, .analytics, .thirdPartySharing]
    static let mapping = ConsentPolicy.default.features

    // Persistent.
    var stored = StoredRecord.none
    var ledger: [LedgerEntry] = []
    var trackingStatus = TrackingAuthorizationStatus.notDetermined
    var failNextSave = false
    var failNextAppend = false

    // This launch.
    var configured: Feature = []
    var policyVersion = 1
    var undecidedSource = FeatureSource.configuration
    var current = Record()
    var deciders: [UInt: Decider] = [:]
    var statuses: [ConsentCategory: ConsentStatus] = [:]
    var lastTrackingDecision = ConsentStatus.unknown
    var remote: Feature = []

    init() {
        relaunch(configuration: [], policyVersion: 1, reset: false)
    }

    // MARK: - Observables

    var local: Feature { current.values.union(configured.subtracting(current.decided)) }

    func status(_ category: ConsentCategory) -> ConsentStatus { statuses[category] ?? .unknown }

    func withholding(_ flag: Feature) -> [ConsentCategory: ConsentStatus] {
        var result: [ConsentCategory: ConsentStatus] = [:]
        for (category, features) in Self.mapping where features.contains(flag) && status(category) != .granted {
            result[category] = status(category)
        }
        return result
    }

    var effective: Feature {
        Feature(Feature.all.flags.filter { local.contains($0) && withholding($0).isEmpty && !remote.contains($0) })
    }

    func reason(for flag: Feature) -> FeatureReason {
        var source = undecidedSource
        var category: ConsentCategory?
        if current.decided.contains(flag) {
            switch deciders[flag.rawValue] {
            case .app: source = .app
            case .consent(let decider):
                source = .consent
                category = decider
            case nil: source = .storedState
            }
        }
        return FeatureReason(
            feature: flag,
            isLocallyEnabled: local.contains(flag),
            isRemotelyDisabled: remote.contains(flag),
            source: source,
            decidingCategory: category,
            withholdingConsent: withholding(flag)
        )
    }

    var advertisingIdentifierIsHandedOut: Bool {
        trackingStatus == .authorized && status(.advertising) == .granted
    }

    // MARK: - Steps

    mutating func relaunch(configuration: Feature, policyVersion: Int, reset: Bool) {
        configured = configuration
        self.policyVersion = policyVersion
        undecidedSource = .configuration
        current = Record()
        if reset {
            // Everything is discarded but the refusals kept for consent.
            if case .record(let record) = stored, !record.denied.isEmpty {
                // Kept in memory even when the rewrite fails (the old record then stays, unused).
                current.denied = record.denied
                if failNextSave {
                    failNextSave = false
                } else {
                    stored = .record(current)
                    undecidedSource = .reset
                }
            } else if stored != .none {
                stored = .none
                undecidedSource = .reset
            }
        } else {
            switch stored {
            case .none: break
            case .corrupt: undecidedSource = .unreadableStoredState
            case .record(let record): current = record
            }
        }
        deciders = [:]
        remote = []
        statuses = [:]
        lastTrackingDecision = .unknown
        for entry in ledger {
            let stale = entry.status == .granted && entry.policyVersion < policyVersion
            statuses[entry.category] = stale ? .unknown : entry.status
            if entry.source == .att && entry.category == .advertising { lastTrackingDecision = entry.status }
        }
        for category in current.denied where !(statuses[category]?.isRefusal ?? false) {
            statuses[category] = .denied
        }
    }

    /// Runs a change of the record and saves it if it changed, as the gate does.
    private mutating func changingRecord(_ body: (inout ConsentModel) -> Void) {
        let before = current
        body(&self)
        guard current != before else { return }
        // Back to what the store holds (a failed save undone): nothing to write, so no save to fail.
        if case .record(let record) = stored, record == current { return }
        if failNextSave {
            failNextSave = false
        } else {
            stored = .record(current)
        }
    }

    /// Decides `flags` to `isOn`.
    private mutating func decide(_ flags: Feature, on isOn: Bool, by decider: Decider) {
        current.decided.formUnion(flags)
        current.values = isOn ? current.values.union(flags) : current.values.subtracting(flags)
        for flag in flags.flags { deciders[flag.rawValue] = decider }
    }

    /// The app decides each flag whose local value the call changes, and nothing else.
    mutating func update(enable: Feature, disable: Feature) {
        let turnedOn = enable.subtracting(disable).subtracting(local)
        let turnedOff = disable.intersection(local)
        changingRecord { model in
            model.decide(turnedOn, on: true, by: .app)
            model.decide(turnedOff, on: false, by: .app)
        }
    }

    mutating func set(_ features: Feature) {
        let visible = effective
        update(enable: features.subtracting(visible), disable: visible.subtracting(features))
    }

    /// `setStatus`: returns whether the change was applied (or nothing needed changing) rather than refused.
    @discardableResult
    mutating func setStatus(_ status: ConsentStatus, for category: ConsentCategory, source: ConsentSource) -> Bool {
        let previous = self.status(category)
        guard previous != status else { return true }
        let recorded = !failNextAppend
        failNextAppend = false
        if recorded {
            ledger.append(LedgerEntry(category: category, status: status, policyVersion: policyVersion, source: source))
        } else if status == .granted {
            return false
        }
        statuses[category] = status
        let features = Self.mapping[category] ?? []
        changingRecord { model in
            switch status {
            case .granted: model.decide(features, on: true, by: .consent(category))
            case .denied, .restricted: model.decide(features, on: false, by: .consent(category))
            case .unknown:
                model.current.decided.subtract(features)
                model.current.values.subtract(features)
                for flag in features.flags { model.deciders[flag.rawValue] = nil }
            }
            if status.isRefusal {
                model.current.denied.insert(category)
            } else {
                model.current.denied.remove(category)
            }
        }
        return true
    }

    mutating func denyAll() {
        for category in Self.categories { setStatus(.denied, for: category, source: .user) }
    }

    /// `applyAnswer` from ATT: only a changed answer counts; one that matches the status is still recorded, and
    /// unknown never lifts a refusal.
    mutating func synchronizeTracking() {
        let answer = trackingStatus.advertisingConsent
        guard answer != lastTrackingDecision else { return }
        let current = status(.advertising)
        if current == answer {
            lastTrackingDecision = answer
            if failNextAppend {
                failNextAppend = false
            } else {
                ledger.append(
                    LedgerEntry(category: .advertising, status: answer, policyVersion: policyVersion, source: .att))
            }
        } else if answer == .unknown && current.isRefusal {
            lastTrackingDecision = answer
        } else if setStatus(answer, for: .advertising, source: .att) {
            lastTrackingDecision = answer
        }
    }

    mutating func corruptStore() { stored = .corrupt }
}

extension Feature {
    init(_ flags: [Feature]) {
        self = flags.reduce(into: []) { $0.formUnion($1) }
    }
}

import FeatureGate
import Foundation

/// A pure reference model of how the gate decides (`effective = local ∩ permitted − remoteDisabled`), written from
/// the rules in DESIGN.md and issues 10 and 19 rather than from the implementation. The model-based tests apply the
/// same steps to it and to the real managers, and compare them after every step.
///
/// Issue 19's rules: answers expire `days × 24 h` after they were given (a grant recorded in the future expires at
/// once where there is a grant lifetime; a refusal recorded in the future holds); an expired grant counts as
/// unanswered, an expired refusal still withholds; an unanswered category follows the region's rule, most specific
/// first; a stricter region applies at once, a looser one at the next launch; a child is never permitted a
/// child-prohibited category; Global Privacy Control, an outside source, refuses sale-or-sharing categories when it
/// turns on.
///
/// Issue 17 part 4's: an outside source's answer decides only when it differs from its last valid answer; unknown is
/// no answer (it is not remembered and changes nothing); what a source said is remembered even when the ledger
/// refuses the entry, which goes in before the next entry that does; beside a refusal only the gate state kept, a
/// source's first answer that is not a refusal only becomes its memory.
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
        var previous: ConsentStatus
        var status: ConsentStatus
        var policyVersion: Int
        var source: ConsentSource
        var time: Date
    }

    /// The answer a category holds: what it was, when (`nil` when only the gate state kept a refusal), by whom.
    struct Answer: Equatable {
        var status: ConsentStatus
        var time: Date?
        var source: ConsentSource?
        var policyVersion: Int
        var expiryNoticed = false
    }

    static let day: TimeInterval = 86_400
    static let start = Date(timeIntervalSince1970: 1_767_607_200)  // 2026-01-05T10:00:00Z
    static let grantDays: [ConsentCategory: Int] = [.analytics: 395, .advertising: 30]
    static let refusalDays: [ConsentCategory: Int] = [.analytics: 180, .thirdPartySharing: 30]
    static let childProhibited: Set<ConsentCategory> = [.advertising]
    static let saleOrSharing: Set<ConsentCategory> = [.advertising, .thirdPartySharing]
    /// Opt-out in the US, opt-in in Virginia and everywhere else.
    static let optOutRegions: Set<String> = ["US"]
    static let optInRegions: Set<String> = ["US-VA"]
    static let regions: [String?] = [nil, "FR", "US", "US-CA", "us-va", "US-VA"]

    /// The policy the real managers run with: the same rules, written as the library spells them.
    static func policy(version: Int) -> ConsentPolicy {
        ConsentPolicy(
            version: version, features: ConsentPolicy.default.features, grantLifetimeDays: grantDays,
            refusalLifetimeDays: refusalDays, childProhibited: childProhibited, saleOrSharing: saleOrSharing,
            unanswered: UnansweredConsentRules(
                default: .optIn,
                regions: [ConsentRegion("US")!: .optOut, ConsentRegion("US-VA")!: .optIn]))
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
    var now = ConsentModel.start
    /// What the app last said: where the user is, and whether a child. It passes both at every launch.
    var appRegion: String?
    var isChild = false

    // This launch.
    var configured: Feature = []
    var policyVersion = 1
    var undecidedSource = FeatureSource.configuration
    var current = Record()
    var deciders: [UInt: Decider] = [:]
    var answers: [ConsentCategory: Answer] = [:]
    var lastAnswers: [ConsentSource: [ConsentCategory: ConsentStatus]] = [:]
    /// Entries of remembered source answers the ledger refused: appended before the next entry (lost at relaunch).
    var unrecorded: [LedgerEntry] = []
    /// Refusals only the gate state kept; and the sources whose first answer for one was taken as their memory.
    var refusalsMissingFromLedger: Set<ConsentCategory> = []
    var anchored: Set<[String]> = []
    var region: String?
    var gpcOn = false
    var remote: Feature = []

    init() {
        relaunch(configuration: [], policyVersion: 1, reset: false)
    }

    // MARK: - Observables

    var local: Feature { current.values.union(configured.subtracting(current.decided)) }

    func hasExpired(_ answer: Answer, _ category: ConsentCategory) -> Bool {
        let days = answer.status == .granted ? Self.grantDays[category] : Self.refusalDays[category]
        guard answer.status == .granted || answer.status.isRefusal else { return false }
        if answer.expiryNoticed { return true }
        guard let days, let time = answer.time else { return false }
        if answer.status == .granted && time > now { return true }
        return now >= time.addingTimeInterval(Double(days) * Self.day)
    }

    func status(_ category: ConsentCategory) -> ConsentStatus {
        guard let answer = answers[category] else { return .unknown }
        if answer.status == .granted && answer.policyVersion < policyVersion { return .unknown }
        return hasExpired(answer, category) ? .expired : answer.status
    }

    func isOptOut(_ region: String?) -> Bool {
        guard let code = region?.uppercased() else { return false }
        if Self.optInRegions.contains(code) { return false }
        if Self.optOutRegions.contains(code) { return true }
        let country = String(code.prefix(2))
        return Self.optOutRegions.contains(country) && !Self.optInRegions.contains(country)
    }

    func isPermitted(_ category: ConsentCategory) -> Bool {
        if isChild && Self.childProhibited.contains(category) { return false }
        switch status(category) {
        case .granted: return true
        case .unknown: return isOptOut(region)
        case .expired: return answers[category]?.status == .granted && isOptOut(region)
        case .denied, .restricted: return false
        }
    }

    func blocker(_ category: ConsentCategory) -> ConsentBlocker? {
        if isChild && Self.childProhibited.contains(category) { return .child }
        let answer = answers[category]
        if let answer, answer.status.isRefusal, answer.source == .gpc, gpcOn, Self.saleOrSharing.contains(category) {
            return .globalPrivacyControl
        }
        return nil
    }

    func withholding(_ flag: Feature) -> [ConsentCategory: ConsentStatus] {
        var result: [ConsentCategory: ConsentStatus] = [:]
        for (category, features) in Self.mapping where features.contains(flag) && !isPermitted(category) {
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
            withholdingConsent: withholding(flag),
            consentBlockers: withholding(flag).keys.reduce(into: [:]) { $0[$1] = blocker($1) }
        )
    }

    var advertisingIdentifierIsHandedOut: Bool {
        trackingStatus == .authorized && status(.advertising) == .granted && isPermitted(.advertising)
    }

    /// Every category that has a status: the policy's and any other with an answer.
    var knownCategories: [ConsentCategory] { Set(Self.categories).union(answers.keys).sorted() }

    // MARK: - Steps

    mutating func relaunch(configuration: Feature, policyVersion: Int, reset: Bool) {
        configured = configuration
        self.policyVersion = policyVersion
        undecidedSource = .configuration
        current = Record()
        if reset {
            // Every decision is discarded, the refusals kept for consent stay: the record (a corrupt one included)
            // is rewritten with them alone, unless it already is just that.
            if stored != .none {
                // Kept in memory even when the rewrite fails (the old record then stays, unused).
                if case .record(let record) = stored { current.denied = record.denied }
                if stored == .record(current) {
                    undecidedSource = .reset
                } else if failNextSave {
                    failNextSave = false
                } else {
                    stored = .record(current)
                    undecidedSource = .reset
                }
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
        answers = [:]
        lastAnswers = [:]
        unrecorded = []
        refusalsMissingFromLedger = []
        anchored = []
        gpcOn = false
        region = appRegion
        for entry in ledger {
            // Unknown is no answer, but Global Privacy Control going off is.
            if entry.status != .expired && (entry.status != .unknown || entry.source == .gpc) {
                lastAnswers[entry.source, default: [:]][entry.category] = entry.status
            }
            if entry.source == .gpc { gpcOn = entry.status == .denied }
            if entry.status == .expired {
                answers[entry.category]?.expiryNoticed = true
            } else if entry.previous != entry.status
                || (entry.status.isRefusal && !(answers[entry.category]?.status.isRefusal ?? false))
            {
                answers[entry.category] = Answer(
                    status: entry.status, time: entry.time, source: entry.source, policyVersion: entry.policyVersion)
            }
        }
        for category in current.denied where !(answers[category]?.status.isRefusal ?? false) {
            answers[category] = Answer(status: .denied, time: nil, source: nil, policyVersion: policyVersion)
            refusalsMissingFromLedger.insert(category)
        }
    }

    /// What every call to the consent manager does first: each answer that expired gets an `expired` entry.
    mutating func noticeExpiries() {
        for category in answers.keys.sorted() {
            guard let answer = answers[category], !answer.expiryNoticed, status(category) == .expired else { continue }
            answers[category]?.expiryNoticed = true
            append(category, previous: answer.status, .expired, source: .appDefault)
        }
    }

    /// Appends to the ledger, after the unrecorded entries, unless the append is set to fail (then neither the
    /// unrecorded entry that failed nor this one is appended); returns whether it was recorded.
    @discardableResult
    private mutating func append(
        _ category: ConsentCategory, previous: ConsentStatus, _ status: ConsentStatus, source: ConsentSource,
        keepIfRefused: Bool = false
    ) -> Bool {
        let entry = LedgerEntry(
            category: category, previous: previous, status: status, policyVersion: policyVersion, source: source,
            time: now)
        for pending in unrecorded + [entry] {
            if failNextAppend {
                failNextAppend = false
                if keepIfRefused { unrecorded.append(entry) }
                return false
            }
            ledger.append(pending)
            if !unrecorded.isEmpty { unrecorded.removeFirst() }
        }
        if previous != status { refusalsMissingFromLedger.remove(category) }
        return true
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
    mutating func setStatus(
        _ status: ConsentStatus, for category: ConsentCategory, source: ConsentSource, keepIfRefused: Bool = false
    ) -> Bool {
        noticeExpiries()
        let previous = self.status(category)
        guard previous != status else { return true }
        let keep = keepIfRefused && status != .granted
        if !append(category, previous: previous, status, source: source, keepIfRefused: keep) && status == .granted {
            return false
        }
        answers[category] = Answer(status: status, time: now, source: source, policyVersion: policyVersion)
        let features = Self.mapping[category] ?? []
        changingRecord { model in
            switch status {
            case .granted: model.decide(features, on: true, by: .consent(category))
            case .denied, .restricted: model.decide(features, on: false, by: .consent(category))
            case .unknown, .expired:
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
        noticeExpiries()
        for category in knownCategories { setStatus(.denied, for: category, source: .user) }
    }

    /// An outside source's answer: only a changed answer counts; unknown is no answer at all; one that matches
    /// the status is still recorded. What a source said is remembered even when the ledger refuses the entry (a
    /// refusal applied anyway, a confirmation), and the entry goes in before the next one. For a refusal only the
    /// gate state kept, each source's first answer that is not a refusal is only remembered (the source's earlier
    /// answers may be lost with the refusal's entry).
    mutating func applyAnswer(_ answer: ConsentStatus, for category: ConsentCategory, source: ConsentSource) {
        noticeExpiries()
        guard answer != .unknown, answer != lastAnswers[source]?[category] else { return }
        let current = status(category)
        let key = [source.rawValue, category.rawValue]
        let isAnchor = refusalsMissingFromLedger.contains(category) && !answer.isRefusal && !anchored.contains(key)
        if current == answer || isAnchor {
            lastAnswers[source, default: [:]][category] = answer
            anchored.insert(key)
            append(category, previous: answer, answer, source: source, keepIfRefused: true)
        } else if setStatus(answer, for: category, source: source, keepIfRefused: true) {
            lastAnswers[source, default: [:]][category] = answer
        }
    }

    mutating func synchronizeTracking() {
        applyAnswer(trackingStatus.advertisingConsent, for: .advertising, source: .att)
    }

    /// Global Privacy Control: on refuses each sale-or-sharing category (as an outside answer); off lifts nothing
    /// and is recorded, so that the next "on" is a change.
    mutating func globalPrivacyControl(_ isOn: Bool) {
        noticeExpiries()
        for category in Self.saleOrSharing.sorted() {
            if isOn {
                applyAnswer(.denied, for: category, source: .gpc)
            } else if lastAnswers[.gpc]?[category] ?? .unknown != .unknown {
                lastAnswers[.gpc, default: [:]][category] = .unknown
                append(category, previous: .unknown, .unknown, source: .gpc, keepIfRefused: true)
            }
        }
        gpcOn = isOn
    }

    /// The app says where the user is: a stricter (or as strict) region applies now, a looser one next launch.
    mutating func setRegion(_ code: String?) {
        noticeExpiries()
        appRegion = code
        if isOptOut(code) && !isOptOut(region) { return }
        region = code
    }

    mutating func setChild(_ isChild: Bool) {
        noticeExpiries()
        self.isChild = isChild
    }

    /// The device clock moves by `seconds` (backwards when negative); the app refreshes.
    mutating func moveClock(by seconds: TimeInterval) {
        now = now.addingTimeInterval(seconds)
        noticeExpiries()
    }

    mutating func corruptStore() { stored = .corrupt }
}

extension Feature {
    init(_ flags: [Feature]) {
        self = flags.reduce(into: []) { $0.formUnion($1) }
    }
}

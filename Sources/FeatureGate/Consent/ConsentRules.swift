import Foundation

/// Where the user is, as the app knows it: an ISO 3166-1 alpha-2 country (`US`) or an ISO 3166-2 subdivision
/// (`US-CA`).
///
/// The app says where the user is (from its server, or from a consent platform's `gdprApplies` or GPP's applicable
/// sections); FeatureGate never guesses it from the device's locale, which would let a locale loosen the rules.
/// Codes compare case-insensitively: they are kept in upper case.
public struct ConsentRegion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The code in upper case: `US` or `US-CA`.
    public let code: String

    /// Reads `code`, in any case: two ASCII letters, optionally followed by `-` and one to three ASCII letters or
    /// digits. Returns `nil` for anything else.
    public init?(_ code: String) {
        let upper = code.uppercased()
        let parts = upper.split(separator: "-", omittingEmptySubsequences: false)
        func isLetters(_ text: Substring) -> Bool { text.utf8.allSatisfy { $0 >= 0x41 && $0 <= 0x5A } }
        func isAlphanumeric(_ text: Substring) -> Bool {
            text.utf8.allSatisfy { ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) }
        }
        guard parts.count <= 2, parts[0].utf8.count == 2, isLetters(parts[0]) else { return nil }
        if parts.count == 2 {
            guard (1...3).contains(parts[1].utf8.count), isAlphanumeric(parts[1]) else { return nil }
        }
        self.code = upper
    }

    /// The country part: `US` for `US-CA`.
    public var country: ConsentRegion {
        guard let dash = code.firstIndex(of: "-") else { return self }
        return ConsentRegion(String(code[..<dash])) ?? self
    }

    /// Whether this is a subdivision (`US-CA`) rather than a country.
    public var isSubdivision: Bool { code.contains("-") }

    /// The code.
    public var description: String { code }

    /// Orders regions by code.
    public static func < (lhs: ConsentRegion, rhs: ConsentRegion) -> Bool { lhs.code < rhs.code }
}

/// What an unanswered category means.
public enum UnansweredConsent: String, Sendable, Hashable, CaseIterable {
    /// Not permitted until granted (the GDPR).
    case optIn
    /// Permitted until refused (US state privacy laws).
    case optOut
}

/// What an unanswered category means, per region: a default, and rules for countries and subdivisions.
///
/// The most specific rule that matches wins: the subdivision's (`US-CA`), then its country's (`US`), then the
/// default. Without a region only the default applies.
public struct UnansweredConsentRules: Sendable, Hashable {
    /// The rule where no region rule matches, or no region is known. `optIn` unless set.
    public var `default`: UnansweredConsent
    /// Rules for countries and subdivisions.
    public var regions: [ConsentRegion: UnansweredConsent]

    /// Creates rules; by default opt-in everywhere.
    public init(default: UnansweredConsent = .optIn, regions: [ConsentRegion: UnansweredConsent] = [:]) {
        self.default = `default`
        self.regions = regions
    }

    /// The rule for `region`: the most specific one that matches.
    public func rule(for region: ConsentRegion?) -> UnansweredConsent {
        guard let region else { return self.default }
        return regions[region] ?? regions[region.country] ?? self.default
    }
}

/// What the app knows about the user right now, beyond their answers: where they are, whether they are a child,
/// and whether a Global Privacy Control signal is on.
///
/// Only the app sets these (``ConsentManager/setRegion(_:)``, ``ConsentManager/setChild(_:)``,
/// ``ConsentManager/applyGlobalPrivacyControl(_:)``); outside consent sources can neither set nor clear the child
/// mark.
public struct ConsentContext: Sendable, Hashable {
    /// Where the user is, or `nil` when the app does not know (only the policy's default rule applies).
    public var region: ConsentRegion?
    /// Whether the app marked the user as a child.
    public var isChild: Bool
    /// Whether a Global Privacy Control signal is on.
    public var isGlobalPrivacyControlOn: Bool

    /// Creates a context; by default nothing is known.
    public init(region: ConsentRegion? = nil, isChild: Bool = false, isGlobalPrivacyControlOn: Bool = false) {
        self.region = region
        self.isChild = isChild
        self.isGlobalPrivacyControlOn = isGlobalPrivacyControlOn
    }
}

/// The last answer the ledger (or the gate state) holds for a category: what ``ConsentPolicy`` judges.
public struct ConsentAnswer: Sendable, Hashable {
    /// The answer: `granted`, `denied`, `restricted`, or `unknown` when it was cleared. Never `expired`.
    public var status: ConsentStatus
    /// When it was given; `nil` when only the gate state kept it (a refusal the ledger could not record).
    public var decidedAt: Date?
    /// Who gave it; `nil` when only the gate state kept it.
    public var source: ConsentSource?
    /// The policy version it was given under.
    public var policyVersion: Int
    /// Whether a grant can be trusted: `false` when the ledger has entries that cannot be decoded.
    public var isTrusted: Bool
    /// Whether an `expired` record followed it: it has expired whatever the lifetimes say now.
    public var isExpiryRecorded: Bool

    /// Creates an answer.
    public init(
        status: ConsentStatus,
        decidedAt: Date?,
        source: ConsentSource?,
        policyVersion: Int,
        isTrusted: Bool = true,
        isExpiryRecorded: Bool = false
    ) {
        self.status = status
        self.decidedAt = decidedAt
        self.source = source
        self.policyVersion = policyVersion
        self.isTrusted = isTrusted
        self.isExpiryRecorded = isExpiryRecorded
    }
}

extension ConsentAnswer {
    /// The answer `record` gives.
    init(_ record: ConsentRecord, isTrusted: Bool) {
        self.init(
            status: record.newStatus, decidedAt: record.time, source: record.source,
            policyVersion: record.policyVersion, isTrusted: isTrusted)
    }
}

/// Why the app must ask about a category again.
public enum ConsentAskReason: String, Sendable, Hashable, CaseIterable {
    /// Nobody has answered.
    case neverAsked
    /// The last grant was given under an older policy version (or the ledger is damaged, so it cannot be trusted).
    case policyVersionChanged
    /// The grant's lifetime ran out.
    case grantExpired
    /// The refusal's lifetime ran out (it still withholds until someone answers).
    case refusalExpired
    /// An outside source (a consent platform, ATT, a server) answered before and has no answer now.
    case sourceAnswerMissing
}

/// What holds a category's features off other than a plain refusal or missing answer.
public enum ConsentBlocker: String, Sendable, Hashable, CaseIterable {
    /// The user is marked a child and the category is ``ConsentPolicy/childProhibited``.
    case child
    /// A Global Privacy Control signal is on and refused the category (``ConsentPolicy/saleOrSharing``).
    case globalPrivacyControl
    /// The category is unanswered (or its grant expired or went stale) and the region's rule is opt-in.
    case region
}

/// Everything a privacy dashboard shows about one category, as ``ConsentPolicy/decision(for:answer:context:now:)``
/// judges it.
public struct ConsentDecision: Sendable, Hashable {
    /// The category.
    public var category: ConsentCategory
    /// Its status: the answer, `unknown` when stale or unanswered, `expired` when its lifetime ran out.
    public var status: ConsentStatus
    /// Whether its features may run.
    public var isPermitted: Bool
    /// When the answer was given, or `nil` when there is none (or only the gate state kept it).
    public var decidedAt: Date?
    /// Who gave the answer, or `nil`.
    public var source: ConsentSource?
    /// When the answer expires (or expired), or `nil` when it never does.
    public var expiresAt: Date?
    /// Why the app must ask again, or `nil` when it need not.
    public var askReason: ConsentAskReason?
    /// What holds the category off beyond its answer, or `nil`.
    public var blocker: ConsentBlocker?

    /// Whether the app must ask about the category (again).
    public var needsAsking: Bool { askReason != nil }

    /// Creates a decision.
    public init(
        category: ConsentCategory,
        status: ConsentStatus,
        isPermitted: Bool,
        decidedAt: Date? = nil,
        source: ConsentSource? = nil,
        expiresAt: Date? = nil,
        askReason: ConsentAskReason? = nil,
        blocker: ConsentBlocker? = nil
    ) {
        self.category = category
        self.status = status
        self.isPermitted = isPermitted
        self.decidedAt = decidedAt
        self.source = source
        self.expiresAt = expiresAt
        self.askReason = askReason
        self.blocker = blocker
    }
}

extension ConsentPolicy {
    /// Seconds in one day of a lifetime: always 24 hours, whatever the calendar or daylight saving says.
    static let secondsPerDay: TimeInterval = 86_400

    /// When an answer given at `decidedAt` with `status` expires, or `nil` when it never does.
    public func expiry(of status: ConsentStatus, for category: ConsentCategory, decidedAt: Date?) -> Date? {
        guard let decidedAt else { return nil }
        let days: Int?
        switch status {
        case .granted: days = grantLifetimeDays[category]
        case .denied, .restricted: days = refusalLifetimeDays[category]
        case .unknown, .expired: days = nil
        }
        return days.map { decidedAt.addingTimeInterval(TimeInterval(max($0, 1)) * Self.secondsPerDay) }
    }

    /// Judges one category: its status, whether its features may run, when its answer expires, whether to ask
    /// again and why, and what blocks it. The one implementation of the rules: the ``ConsentManager`` and
    /// `featuregate consent explain` both call it.
    ///
    /// - An answer has expired from the instant `decidedAt + lifetime` on, or once an `expired` record followed it.
    ///   A grant recorded later than `now` counts as expired where the category has a grant lifetime (a clock that
    ///   moved backwards never stretches a grant); a refusal recorded later than `now` holds.
    /// - A grant under an older policy version (or from a damaged ledger) reads `unknown` and counts as
    ///   unanswered; so does an expired grant (status `expired`). An unanswered category is permitted where the
    ///   region's ``unanswered`` rule is opt-out (or the category is ``permittedUntilAsked``).
    /// - A refusal, expired or not, is never permission; `restricted` is a refusal.
    /// - While the user is a child, a ``childProhibited`` category is never permitted.
    public func decision(
        for category: ConsentCategory,
        answer: ConsentAnswer?,
        context: ConsentContext,
        now: Date
    ) -> ConsentDecision {
        let given = answer?.status ?? .unknown
        let expiresAt = expiry(of: given, for: category, decidedAt: answer?.decidedAt)
        var decision = ConsentDecision(
            category: category, status: given, isPermitted: false, decidedAt: answer?.decidedAt,
            source: answer?.source, expiresAt: expiresAt)
        let isStale = given == .granted && answer.map { !$0.isTrusted || $0.policyVersion < version } ?? false
        var hasExpired = false
        if let answer, given == .granted || given.isRefusal {
            let lapsed = expiresAt.map { now >= $0 } ?? false
            // A grant recorded later than now (the clock moved back) is never given more time.
            let isFromTheFuture = given == .granted && expiresAt != nil && (answer.decidedAt ?? now) > now
            hasExpired = answer.isExpiryRecorded || lapsed || isFromTheFuture
        }
        var isUnanswered = false
        if isStale {
            decision.status = .unknown
            decision.askReason = .policyVersionChanged
            isUnanswered = true
        } else if hasExpired {
            decision.status = .expired
            decision.askReason = given == .granted ? .grantExpired : .refusalExpired
            isUnanswered = given == .granted
        } else if given == .unknown {
            decision.askReason = answer?.source?.isOutside ?? false ? .sourceAnswerMissing : .neverAsked
            isUnanswered = true
        }
        if context.isChild && childProhibited.contains(category) {
            decision.blocker = .child
        } else if isUnanswered {
            decision.isPermitted = isOptOut(category, in: context.region)
            if !decision.isPermitted { decision.blocker = .region }
        } else {
            decision.isPermitted = decision.status == .granted
            if given.isRefusal && answer?.source == .gpc && context.isGlobalPrivacyControlOn
                && saleOrSharing.contains(category)
            {
                decision.blocker = .globalPrivacyControl
            }
        }
        return decision
    }

    /// Judges every category of the policy and every other category `answers` holds.
    public func decisions(
        answers: [ConsentCategory: ConsentAnswer],
        context: ConsentContext,
        now: Date
    ) -> [ConsentCategory: ConsentDecision] {
        var result: [ConsentCategory: ConsentDecision] = [:]
        for category in Set(categories).union(answers.keys) {
            result[category] = decision(for: category, answer: answers[category], context: context, now: now)
        }
        return result
    }

    /// The features of `features` that consent permits under `decisions`: every category that maps a feature must
    /// be permitted (a category missing from `decisions` is judged unanswered, with no context).
    public func permitted(_ features: Feature, decisions: [ConsentCategory: ConsentDecision]) -> Feature {
        var withheld: Feature = []
        for (category, mapped) in self.features {
            let decision =
                decisions[category] ?? decision(for: category, answer: nil, context: ConsentContext(), now: Date())
            if !decision.isPermitted { withheld.formUnion(mapped) }
        }
        return features.subtracting(withheld)
    }
}

/// What a consent ledger says, folded into the last answer of each category and the last answer of each source:
/// how the ``ConsentManager`` starts (and so what `featuregate consent explain` shows).
public struct ConsentTrail: Sendable, Hashable {
    /// The last answer of each category that has one.
    public var answers: [ConsentCategory: ConsentAnswer]
    /// What each source last answered for each category (what ``ConsentManager/applyAnswer(_:for:source:)`` compares
    /// an outside source's new answer with). A record of `unknown` is no answer and leaves it as it was, except a
    /// ``ConsentSource/gpc`` one (the signal went off).
    public var sourceAnswers: [ConsentSource: [ConsentCategory: ConsentStatus]]
    /// Whether the last Global Privacy Control record said the signal was on.
    public var isGlobalPrivacyControlOn: Bool
    /// How many entries of the trail could not be decoded. While any cannot, no grant is trusted.
    public var unreadableEntries: Int

    /// Folds `contents`: the last change of each category wins; an `expired` record marks the answer before it as
    /// expired; a record whose previous and new status are the same (an outside source confirming the status, or
    /// a Global Privacy Control signal going off) changes no answer, unless it confirms a refusal the trail before
    /// it lacks (an entry was lost). When entries cannot be decoded, every grant is untrusted.
    public init(_ contents: ConsentLedgerContents) {
        self.init(answers: [:], sourceAnswers: [:], isGlobalPrivacyControlOn: false, unreadableEntries: 0)
        fold(contents)
    }

    init(
        answers: [ConsentCategory: ConsentAnswer],
        sourceAnswers: [ConsentSource: [ConsentCategory: ConsentStatus]],
        isGlobalPrivacyControlOn: Bool,
        unreadableEntries: Int
    ) {
        self.answers = answers
        self.sourceAnswers = sourceAnswers
        self.isGlobalPrivacyControlOn = isGlobalPrivacyControlOn
        self.unreadableEntries = unreadableEntries
    }

    /// Folds `contents`, the entries that follow those this trail was folded from, on top of it. Folding a ledger
    /// in any number of consecutive pieces gives what folding it at once gives: an entry that cannot be decoded
    /// untrusts every grant, before and after it.
    public mutating func fold(_ contents: ConsentLedgerContents) {
        unreadableEntries += contents.unreadableEntries
        let isTrusted = unreadableEntries == 0
        for record in contents.records {
            // Unknown is no answer, except a Global Privacy Control signal going off.
            if record.newStatus != .expired && (record.newStatus != .unknown || record.source == .gpc) {
                sourceAnswers[record.source, default: [:]][record.category] = record.newStatus
            }
            if record.source == .gpc { isGlobalPrivacyControlOn = record.newStatus == .denied }
            if record.newStatus == .expired {
                answers[record.category]?.isExpiryRecorded = true
            } else if Self.changesAnswer(record, answers[record.category]) {
                answers[record.category] = ConsentAnswer(record, isTrusted: isTrusted)
            }
        }
        if !isTrusted { answers = Self.untrusted(answers) }
    }

    /// `answers` with every grant untrusted: what an entry that cannot be decoded does to the whole trail.
    static func untrusted(_ answers: [ConsentCategory: ConsentAnswer]) -> [ConsentCategory: ConsentAnswer] {
        answers.mapValues { answer in
            var answer = answer
            answer.isTrusted = false
            return answer
        }
    }

    /// Whether `record` replaces `answer`, the category's last answer before it: a change of status, or a refusal
    /// confirmed where the trail before it lacks one. (`expired` records only mark the answer.)
    static func changesAnswer(_ record: ConsentRecord, _ answer: ConsentAnswer?) -> Bool {
        record.previousStatus != record.newStatus
            || (record.newStatus.isRefusal && !(answer?.status.isRefusal ?? false))
    }

    /// Adds the refusals the gate state kept for categories whose last answer is not a refusal (their ledger append
    /// failed); returns those categories.
    public mutating func mergeRefusals(_ refused: Set<ConsentCategory>, policyVersion: Int) -> Set<ConsentCategory> {
        var merged: Set<ConsentCategory> = []
        for category in refused where !(answers[category]?.status.isRefusal ?? false) {
            answers[category] = ConsentAnswer(
                status: .denied, decidedAt: nil, source: nil, policyVersion: policyVersion)
            merged.insert(category)
        }
        return merged
    }
}

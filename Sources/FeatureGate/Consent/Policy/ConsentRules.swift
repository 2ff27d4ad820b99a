import Foundation

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
        result.reserveCapacity(features.count + answers.count)
        // Each category once: the policy's, then those only `answers` holds (no set built: a launch calls this).
        for category in features.keys {
            result[category] = decision(for: category, answer: answers[category], context: context, now: now)
        }
        for (category, answer) in answers where result[category] == nil {
            result[category] = decision(for: category, answer: answer, context: context, now: now)
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

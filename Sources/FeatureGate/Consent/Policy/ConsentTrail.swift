import Foundation

/// What a consent ledger says, folded into the last answer of each category and the last answer of each source:
/// how the ``ConsentManager`` starts (and so what `featuregate consent explain` shows).
package struct ConsentTrail: Sendable, Equatable {
    /// The last answer of each category that has one.
    package var answers: [ConsentCategory: ConsentAnswer]
    /// What each source last answered for each category (what ``ConsentManager/applyAnswer(_:for:source:)`` compares
    /// an outside source's new answer with). A record of `unknown` is no answer and leaves it as it was, except a
    /// ``ConsentSource/gpc`` one (the signal went off).
    package var sourceAnswers: [ConsentSource: [ConsentCategory: ConsentStatus]]
    /// Whether the last Global Privacy Control record said the signal was on.
    package var isGlobalPrivacyControlOn: Bool
    /// How many entries of the trail could not be decoded. While any cannot, no grant is trusted.
    package var unreadableEntries: Int

    /// Folds `contents`: the last change of each category wins; an `expired` record marks the answer before it as
    /// expired; a record whose previous and new status are the same (an outside source confirming the status, or
    /// a Global Privacy Control signal going off) changes no answer, unless it confirms a refusal the trail before
    /// it lacks (an entry was lost). When entries cannot be decoded, every grant is untrusted.
    package init(_ contents: ConsentLedgerContents) {
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
    package mutating func fold(_ contents: ConsentLedgerContents) {
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
    package mutating func mergeRefusals(_ refused: Set<ConsentCategory>, policyVersion: Int) -> Set<ConsentCategory> {
        var merged: Set<ConsentCategory> = []
        for category in refused where !(answers[category]?.status.isRefusal ?? false) {
            answers[category] = ConsentAnswer(
                status: .denied, decidedAt: nil, source: nil, policyVersion: policyVersion)
            merged.insert(category)
        }
        return merged
    }
}

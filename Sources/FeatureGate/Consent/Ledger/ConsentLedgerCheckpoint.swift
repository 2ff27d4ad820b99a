import Foundation

/// The checkpoint a ``FileConsentLedger`` keeps beside its file: the trail folded up to a point of the file, so that
/// start-up reads only what follows the point.
///
/// A JSON object: `v` (the format, 1), `ledgerLength` and `fingerprint` (the point, see ``ConsentLedgerPosition``;
/// the fingerprint in Base64), `digest` (of the `ledgerLength` bytes before the point, see ``ConsentLedgerDigest``;
/// absent from checkpoints of earlier versions, which read as before and are checked by a whole fold instead),
/// `unreadableEntries`, `globalPrivacyControl`, `answers` (per category: status,
/// `decidedAt` as seconds since 2001 so that it reads back exactly, source, policy version, whether trusted and
/// whether an expiry was recorded) and `sourceAnswers`. Anything else (another version, a value out of range, a
/// source or status this version does not know) is no checkpoint at all: the ledger is folded from its start.
enum ConsentLedgerCheckpoint {
    static let version = 1
    /// The most bytes a checkpoint read accepts; a larger one is not written.
    static let maximumSize = 1024 * 1024

    private struct Stored: Codable {
        var v: Int
        var ledgerLength: Int
        var fingerprint: Data
        var digest: String?
        var unreadableEntries: Int
        var globalPrivacyControl: Bool
        var answers: [Answer]
        var sourceAnswers: [SourceAnswer]
    }

    private struct Answer: Codable {
        var category: ConsentCategory
        var status: ConsentStatus
        var decidedAt: Double?
        var source: ConsentSource?
        var policyVersion: Int
        var trusted: Bool
        var expiryRecorded: Bool
    }

    private struct SourceAnswer: Codable {
        var source: ConsentSource
        var category: ConsentCategory
        var status: ConsentStatus
    }

    static func encode(_ snapshot: ConsentLedgerSnapshot) -> Data? {
        guard let position = snapshot.position else { return nil }
        let trail = snapshot.trail
        let stored = Stored(
            v: version, ledgerLength: position.offset, fingerprint: position.fingerprint,
            digest: position.digest?.encoded,
            unreadableEntries: trail.unreadableEntries, globalPrivacyControl: trail.isGlobalPrivacyControlOn,
            answers: trail.answers.sorted { $0.key < $1.key }.map { category, answer in
                Answer(
                    category: category, status: answer.status,
                    decidedAt: answer.decidedAt?.timeIntervalSinceReferenceDate, source: answer.source,
                    policyVersion: answer.policyVersion, trusted: answer.isTrusted,
                    expiryRecorded: answer.isExpiryRecorded)
            },
            sourceAnswers: trail.sourceAnswers.sorted { $0.key.rawValue < $1.key.rawValue }.flatMap { source, answers in
                answers.sorted { $0.key < $1.key }.map {
                    SourceAnswer(source: source, category: $0.key, status: $0.value)
                }
            })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(stored), data.count <= maximumSize else { return nil }
        return data
    }

    static func decode(_ data: Data) -> ConsentLedgerSnapshot? {
        guard let stored = try? JSONDecoder().decode(Stored.self, from: data), stored.v == version,
            stored.ledgerLength >= 0, stored.unreadableEntries >= 0,
            stored.fingerprint.count == min(stored.ledgerLength, ConsentLedgerPosition.fingerprintLength)
        else { return nil }
        var answers: [ConsentCategory: ConsentAnswer] = [:]
        for answer in stored.answers {
            guard answer.status != .expired, answers[answer.category] == nil, answer.decidedAt?.isFinite ?? true
            else { return nil }
            answers[answer.category] = ConsentAnswer(
                status: answer.status, decidedAt: answer.decidedAt.map { Date(timeIntervalSinceReferenceDate: $0) },
                source: answer.source, policyVersion: answer.policyVersion, isTrusted: answer.trusted,
                isExpiryRecorded: answer.expiryRecorded)
        }
        var sourceAnswers: [ConsentSource: [ConsentCategory: ConsentStatus]] = [:]
        for answer in stored.sourceAnswers {
            guard answer.status != .expired, sourceAnswers[answer.source]?[answer.category] == nil else { return nil }
            sourceAnswers[answer.source, default: [:]][answer.category] = answer.status
        }
        let trail = ConsentTrail(
            answers: answers, sourceAnswers: sourceAnswers, isGlobalPrivacyControlOn: stored.globalPrivacyControl,
            unreadableEntries: stored.unreadableEntries)
        return ConsentLedgerSnapshot(
            trail: trail,
            position: ConsentLedgerPosition(
                offset: stored.ledgerLength, fingerprint: stored.fingerprint,
                digest: stored.digest.flatMap(ConsentLedgerDigest.init(encoded:))))
    }
}

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

    /// Where a fold finds the checkpoint, read only when it is asked for (``ConsentLedgerFolding``). A value, not a
    /// closure: each closure literal made the optimizer compile the fold once more (issue 47).
    enum Source {
        /// No checkpoint.
        case none
        /// The file at a location (read without a lock).
        case file(FileLocation)
        /// The file `name` beside a file just appended to, under its lock.
        case sibling(String, of: AtomicFile.AppendedFile)

        /// The checkpoint, or `nil` when there is none or it cannot be read or decoded.
        func snapshot() -> ConsentLedgerSnapshot? {
            switch self {
            case .none:
                nil
            case .file(let location):
                (try? AtomicFile.read(location, limit: maximumSize)).flatMap { $0 }.flatMap(decode)
            case .sibling(let name, let appended):
                appended.readSibling(name, limit: maximumSize).flatMap(decode)
            }
        }
    }

    fileprivate struct Stored: Encodable {
        var v: Int
        var ledgerLength: Int
        var fingerprint: Data
        var digest: String?
        var unreadableEntries: Int
        var globalPrivacyControl: Bool
        var answers: [Answer]
        var sourceAnswers: [SourceAnswer]

        // Written out with the shared ``JSONKey``, as a synthesized conformance would: the digest only when present.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: JSONKey.self)
            try container.encode(v, forKey: "v")
            try container.encode(ledgerLength, forKey: "ledgerLength")
            try container.encode(fingerprint, forKey: "fingerprint")
            try container.encodeIfPresent(digest, forKey: "digest")
            try container.encode(unreadableEntries, forKey: "unreadableEntries")
            try container.encode(globalPrivacyControl, forKey: "globalPrivacyControl")
            try container.encode(answers, forKey: "answers")
            try container.encode(sourceAnswers, forKey: "sourceAnswers")
        }
    }

    fileprivate struct Answer: Encodable {
        var category: ConsentCategory
        var status: ConsentStatus
        var decidedAt: Double?
        var source: ConsentSource?
        var policyVersion: Int
        var trusted: Bool
        var expiryRecorded: Bool

        // Written out with the shared ``JSONKey``, as a synthesized conformance would: optionals only when present.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: JSONKey.self)
            try container.encode(category, forKey: "category")
            try container.encode(status, forKey: "status")
            try container.encodeIfPresent(decidedAt, forKey: "decidedAt")
            try container.encodeIfPresent(source, forKey: "source")
            try container.encode(policyVersion, forKey: "policyVersion")
            try container.encode(trusted, forKey: "trusted")
            try container.encode(expiryRecorded, forKey: "expiryRecorded")
        }
    }

    fileprivate struct SourceAnswer: Encodable {
        var source: ConsentSource
        var category: ConsentCategory
        var status: ConsentStatus

        // Written out with the shared ``JSONKey``, as a synthesized conformance would.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: JSONKey.self)
            try container.encode(source, forKey: "source")
            try container.encode(category, forKey: "category")
            try container.encode(status, forKey: "status")
        }
    }

    static func encode(_ snapshot: ConsentLedgerSnapshot) -> Data? {
        guard let position = snapshot.position else { return nil }
        let trail = snapshot.trail
        let stored = Stored(
            v: version, ledgerLength: position.offset, fingerprint: position.fingerprint,
            digest: position.digest?.encoded,
            unreadableEntries: trail.unreadableEntries, globalPrivacyControl: trail.isGlobalPrivacyControlOn,
            answers: trail.answers.sorted(byName: \.key.rawValue).map { category, answer in
                Answer(
                    category: category, status: answer.status,
                    decidedAt: answer.decidedAt?.timeIntervalSinceReferenceDate, source: answer.source,
                    policyVersion: answer.policyVersion, trusted: answer.isTrusted,
                    expiryRecorded: answer.isExpiryRecorded)
            },
            sourceAnswers: trail.sourceAnswers.sorted(byName: \.key.rawValue).flatMap { source, answers in
                answers.sorted(byName: \.key.rawValue).map {
                    SourceAnswer(source: source, category: $0.key, status: $0.value)
                }
            })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(stored), data.count <= maximumSize else { return nil }
        return data
    }

    static func decode(_ data: Data) -> ConsentLedgerSnapshot? {
        guard let json = JSONValue(parsing: data), let stored = Stored(json), stored.v == version,
            stored.ledgerLength >= 0, stored.unreadableEntries >= 0,
            stored.fingerprint.count == min(stored.ledgerLength, ConsentLedgerPosition.fingerprintLength)
        else { return nil }
        var answers: [ConsentCategory: ConsentAnswer] = [:]
        answers.reserveCapacity(stored.answers.count)
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

// Read with the package's own JSON reader, field by field as `JSONDecoder` read them: a launch reads the checkpoint,
// and the decoder cost about 120 allocations there (issue 47).
extension ConsentLedgerCheckpoint.Stored {
    /// `nil` when a field is missing or of another type.
    fileprivate init?(_ json: JSONValue) {
        guard case .object = json, let v = json["v"]?.integer(Int.self),
            let ledgerLength = json["ledgerLength"]?.integer(Int.self),
            let fingerprint = json["fingerprint"]?.string.flatMap({ Data(base64Encoded: $0) }),
            let digest = json.optional("digest", \.string),
            let unreadableEntries = json["unreadableEntries"]?.integer(Int.self),
            let globalPrivacyControl = json["globalPrivacyControl"]?.bool,
            let answers = json["answers"]?.array.flatMap({ Self.all($0, ConsentLedgerCheckpoint.Answer.init) }),
            let sourceAnswers = json["sourceAnswers"]?.array.flatMap({
                Self.all($0, ConsentLedgerCheckpoint.SourceAnswer.init)
            })
        else { return nil }
        self.init(
            v: v, ledgerLength: ledgerLength, fingerprint: fingerprint, digest: digest,
            unreadableEntries: unreadableEntries, globalPrivacyControl: globalPrivacyControl, answers: answers,
            sourceAnswers: sourceAnswers)
    }

    /// Every element read, or `nil` when one cannot be.
    private static func all<Element>(_ values: [JSONValue], _ read: (JSONValue) -> Element?) -> [Element]? {
        var elements: [Element] = []
        elements.reserveCapacity(values.count)
        for value in values {
            guard let element = read(value) else { return nil }
            elements.append(element)
        }
        return elements
    }
}

extension ConsentLedgerCheckpoint.Answer {
    fileprivate init?(_ json: JSONValue) {
        guard case .object = json, let category = json["category"]?.string.map(ConsentCategory.init(rawValue:)),
            let status = json["status"]?.string.flatMap(ConsentStatus.init(rawValue:)),
            let decidedAt = json.optional("decidedAt", \.double),
            let source = json.optional("source", { $0.string.flatMap(ConsentSource.init(rawValue:)) }),
            let policyVersion = json["policyVersion"]?.integer(Int.self), let trusted = json["trusted"]?.bool,
            let expiryRecorded = json["expiryRecorded"]?.bool
        else { return nil }
        self.init(
            category: category, status: status, decidedAt: decidedAt, source: source, policyVersion: policyVersion,
            trusted: trusted, expiryRecorded: expiryRecorded)
    }
}

extension ConsentLedgerCheckpoint.SourceAnswer {
    fileprivate init?(_ json: JSONValue) {
        guard case .object = json, let source = json["source"]?.string.flatMap(ConsentSource.init(rawValue:)),
            let category = json["category"]?.string.map(ConsentCategory.init(rawValue:)),
            let status = json["status"]?.string.flatMap(ConsentStatus.init(rawValue:))
        else { return nil }
        self.init(source: source, category: category, status: status)
    }
}

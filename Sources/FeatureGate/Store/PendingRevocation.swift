import Foundation

/// A revoke-all that began and has not finished, kept in the gate's state record (`FeatureStateRecord`).
///
/// Revoke-all writes it, in the same locked read-modify-write that disables every feature and refuses every
/// consent category, before it changes anything else. A process killed at any point after that leaves it behind,
/// and the next start finishes the revocation: the gate reads as revoked from its first check (the record says
/// so), `SubsystemRuntime.start()` purges every subsystem before it starts one, ``AnonymousIdentifier`` deletes
/// its file when it is created, and the app's `ConsentRevocation.finishPendingRevocation(source:erasure:)` sends the
/// erasure request again with the same `requestKey`. Each part marks itself done here; the record goes when
/// every part is done.
///
/// `anonymousIdentifier` is the only copy of the erased identifier that survives revoke-all, and only until the
/// erasure request has been sent.
package struct PendingRevocation: Sendable, Equatable, Codable {
    /// The erasure request's idempotency key: every attempt sends the same key, so the server can drop duplicates.
    package var requestKey: UUID
    /// The anonymous identifier whose data the server must erase, or `nil` when there was none (or it has been sent).
    package var anonymousIdentifier: UUID?
    /// When revoke-all began, to the second.
    package var beganAt: Date
    /// Whether an erasure request is still owed: one was asked for, something was enabled when revoke-all began,
    /// and no attempt has reached the server yet.
    package var isErasureOwed: Bool
    /// Whether every subsystem has been purged without a failure.
    package var areSubsystemsPurged: Bool
    /// Whether the anonymous identifier's file (and the temporary files beside it) has been deleted.
    package var isIdentifierDeleted: Bool
    /// The earliest time the owed erasure request may be sent again: the server asked to wait (`Retry-After` on a
    /// 429 or 503), to the second; `nil` when it may go now.
    package var erasureNotBefore: Date?

    /// Creates a pending revocation that has done nothing yet but record itself.
    ///
    /// - Parameters:
    ///   - requestKey: The erasure request's idempotency key; a random one unless given.
    ///   - anonymousIdentifier: The identifier to erase, if any.
    ///   - beganAt: When revoke-all began; kept to the second.
    ///   - isErasureOwed: Whether an erasure request must be sent.
    package init(
        requestKey: UUID = UUID(), anonymousIdentifier: UUID?, beganAt: Date = Date(), isErasureOwed: Bool
    ) {
        self.requestKey = requestKey
        self.anonymousIdentifier = anonymousIdentifier
        self.beganAt = Date(timeIntervalSince1970: beganAt.timeIntervalSince1970.rounded(.down))
        self.isErasureOwed = isErasureOwed
        self.areSubsystemsPurged = false
        self.isIdentifierDeleted = false
    }

    /// Whether every part is done, so the record can go.
    package var isFinished: Bool { !isErasureOwed && areSubsystemsPurged && isIdentifierDeleted }

    /// This unfinished revocation, joined by a new revoke-all (`newer`): it keeps its key (an erasure it owes may
    /// have reached the server under it) and its identifier, owes an erasure if either does, and must do its local
    /// parts again.
    package func joined(by newer: PendingRevocation) -> PendingRevocation {
        var joined = self
        joined.isErasureOwed = isErasureOwed || newer.isErasureOwed
        joined.anonymousIdentifier = anonymousIdentifier ?? newer.anonymousIdentifier
        joined.erasureNotBefore = erasureNotBefore ?? newer.erasureNotBefore
        joined.areSubsystemsPurged = false
        joined.isIdentifierDeleted = false
        return joined
    }

    /// The erasure is done (sent, or given up on as not owed): the identifier goes with it.
    package mutating func markErasureDone() {
        isErasureOwed = false
        anonymousIdentifier = nil
        erasureNotBefore = nil
    }

    /// The record's JSON, keys sorted.
    package func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // UUIDs, an integer and booleans always encode.
        return (try? encoder.encode(self)) ?? Data("{}".utf8)
    }

    /// Decodes the form `encode(to:)` writes: `beganAt` in whole seconds since 1970.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        requestKey = try container.decode(UUID.self, forKey: "requestKey")
        anonymousIdentifier = try container.decodeIfPresent(UUID.self, forKey: "anonymousIdentifier")
        beganAt = Date(timeIntervalSince1970: TimeInterval(try container.decode(Int64.self, forKey: "beganAt")))
        isErasureOwed = try container.decode(Bool.self, forKey: "isErasureOwed")
        areSubsystemsPurged = try container.decode(Bool.self, forKey: "areSubsystemsPurged")
        isIdentifierDeleted = try container.decode(Bool.self, forKey: "isIdentifierDeleted")
        erasureNotBefore = try container.decodeIfPresent(Int64.self, forKey: "erasureNotBefore").map {
            Date(timeIntervalSince1970: TimeInterval($0))
        }
    }

    /// Reads the form `encode(to:)` writes from a JSON value, as ``init(from:)`` reads it through a decoder (the
    /// gate state's reader, which uses no decoder: issue 47); `nil` when a field is missing or of another type.
    package init?(json: JSONValue) {
        guard case .object = json, let key = json["requestKey"]?.string.flatMap(UUID.init(uuidString:)),
            let identifier = json.optional("anonymousIdentifier", { $0.string.flatMap(UUID.init(uuidString:)) }),
            let began = json["beganAt"]?.integer(Int64.self), let owed = json["isErasureOwed"]?.bool,
            let purged = json["areSubsystemsPurged"]?.bool, let deleted = json["isIdentifierDeleted"]?.bool,
            let notBefore = json.optional("erasureNotBefore", { $0.integer(Int64.self) })
        else { return nil }
        requestKey = key
        anonymousIdentifier = identifier
        beganAt = Date(timeIntervalSince1970: TimeInterval(began))
        isErasureOwed = owed
        areSubsystemsPurged = purged
        isIdentifierDeleted = deleted
        erasureNotBefore = notBefore.map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }

    /// Encodes the record; `beganAt` and `erasureNotBefore` as whole seconds since 1970, the identifier and the
    /// time only while there is one.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        try container.encode(requestKey, forKey: "requestKey")
        try container.encodeIfPresent(anonymousIdentifier, forKey: "anonymousIdentifier")
        try container.encode(Int64(beganAt.timeIntervalSince1970), forKey: "beganAt")
        try container.encode(isErasureOwed, forKey: "isErasureOwed")
        try container.encode(areSubsystemsPurged, forKey: "areSubsystemsPurged")
        try container.encode(isIdentifierDeleted, forKey: "isIdentifierDeleted")
        try container.encodeIfPresent(
            erasureNotBefore.map { Int64($0.timeIntervalSince1970.rounded(.up)) }, forKey: "erasureNotBefore")
    }
}

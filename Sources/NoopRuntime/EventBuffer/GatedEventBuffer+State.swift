import FeatureGate
import Foundation

extension GatedEventBuffer {
    /// What waits in the ring: an event with the consent and user in force when it was tracked, or a consent
    /// change. Its identifier is made when it leaves the ring.
    @usableFromInline
    enum Entry {
        case event(Event, ConsentPreferences, String?)
        case consent(ConsentPreferences, String?)
    }

    @usableFromInline
    struct State {
        /// The ring of waiting entries: `count` of them, the oldest at `head`. An entry's number (from which its
        /// identifier is derived when it leaves the ring) is its place in the sequence: the newest is
        /// `tracked - 1`, so no entry carries anything beyond itself while it waits.
        @usableFromInline var ring: [Entry?]
        @usableFromInline var head = 0
        @usableFromInline var count = 0
        /// How many events have entered the ring under the current identifier key.
        @usableFromInline var tracked: UInt64 = 0
        /// The identifiers' key and the batch counter; a new key after every revocation.
        var identifiers: EventIdentifiers
        /// The consent decisions in force, as the consent manager last applied them: what `track` stamps.
        @usableFromInline var consent: ConsentPreferences
        /// The SDK's user identifier, stamped by `track`; forgotten by a revocation.
        @usableFromInline var userId: String?
        /// Per backend, the elements handed over but not yet in a batch that was attempted.
        var backlog: [[EventBatch<Event>.Element]]
        /// Per backend, the batch that failed, retried unchanged (its key too) before the backlog; older than it.
        var failed: [EventBatch<Event>?]
        /// Per backend, the earliest time (from `now`) of the next attempt: the server's `Retry-After`.
        var notBefore: [Double]
        @usableFromInline var dropped = 0
        var purged = 0
        /// Entries a closing gate revoked since the last purge; the next purge counts them.
        var revoked = 0
        var isFlushing = false
        /// Bumped by every purge, so a flush can tell that its batches are gone.
        var generation: UInt64 = 0
        /// The gate's revocation counter for the buffer's features, as far as the buffer has acted on it.
        @usableFromInline var seenDisables: UInt64

        init(
            capacity: Int, backendCount: Int, seenDisables: UInt64, identifiers: EventIdentifiers,
            consent: ConsentPreferences
        ) {
            ring = Array(repeating: nil, count: capacity)
            self.consent = consent
            self.identifiers = identifiers
            backlog = Array(repeating: [], count: backendCount)
            failed = Array(repeating: nil, count: backendCount)
            notBefore = Array(repeating: -.infinity, count: backendCount)
            self.seenDisables = seenDisables
        }

        /// Revokes everything captured before a revocation the buffer has not acted on yet. The counter only grows,
        /// so a stale reading changes nothing.
        @inlinable
        mutating func catchUp(disables: UInt64) {
            guard disables > seenDisables else { return }
            seenDisables = disables
            revokeAll()
        }

        /// Appends `event`, dropping the oldest when the ring is full. The hot path of `track`: no division, no
        /// allocation, no system call.
        @inlinable
        mutating func push(_ event: Entry, capacity: Int) {
            tracked &+= 1
            if count == capacity {
                ring[head] = event
                head = head + 1 == capacity ? 0 : head + 1
                dropped += 1
            } else {
                let index = head + count
                ring[index < capacity ? index : index - capacity] = event
                count += 1
            }
        }

        /// A batch of `elements` under a new idempotency key, for the install `anonymousId`.
        mutating func newBatch(_ elements: [EventBatch<Event>.Element], anonymousId: UUID?) -> EventBatch<Event> {
            EventBatch(elements: elements, idempotencyKey: identifiers.nextBatchKey(), anonymousId: anonymousId)
        }

        mutating func moveBufferToBacklogs(capacity: Int) {
            var drained: [EventBatch<Event>.Element] = []
            drained.reserveCapacity(count)
            let first = tracked &- UInt64(count)
            for offset in 0..<count {
                let index = (head + offset) % capacity
                let id = identifiers.event(first &+ UInt64(offset))
                switch ring[index] {
                case .event(let event, let consent, let userId)?:
                    drained.append(.event(IdentifiedEvent(event, id: id, consent: consent, userId: userId)))
                case .consent(let consent, let userId)?:
                    drained.append(
                        .consentPreferenceUpdated(ConsentPreferenceUpdate(id: id, consent: consent, userId: userId)))
                case nil: break
                }
                ring[index] = nil
            }
            head = 0
            count = 0
            for index in backlog.indices {
                backlog[index].append(contentsOf: drained)
                trimBacklog(index, capacity: capacity)
            }
        }

        /// Drops the oldest events of a backend's failed batch and backlog beyond `capacity`, counting them as
        /// drops. A failed batch that loses events is a new batch, under a new key.
        mutating func trimBacklog(_ index: Int, capacity: Int) {
            var overflow = (failed[index]?.elements.count ?? 0) + backlog[index].count - capacity
            guard overflow > 0 else { return }
            dropped += overflow
            if let batch = failed[index] {
                let cut = min(overflow, batch.elements.count)
                failed[index] =
                    cut == batch.elements.count
                    ? nil : newBatch(Array(batch.elements.dropFirst(cut)), anonymousId: batch.anonymousId)
                overflow -= cut
            }
            if overflow > 0 { backlog[index].removeFirst(overflow) }
        }

        mutating func purgeAll() -> Int {
            revokeAll()
            let total = revoked
            revoked = 0
            purged += total
            return total
        }

        /// Drops everything queued and closes the batches in flight, keeping the count for the next purge.
        @usableFromInline
        mutating func revokeAll() {
            revoked +=
                count + backlog.reduce(0) { $0 + $1.count } + failed.reduce(0) { $0 + ($1?.elements.count ?? 0) }
            for index in ring.indices { ring[index] = nil }
            head = 0
            count = 0
            for index in backlog.indices { backlog[index].removeAll() }
            for index in failed.indices { failed[index] = nil }
            // Who the user was is data captured before the revocation too.
            userId = nil
            generation += 1
            // Nothing tracked from now on can be linked by its identifier to what was revoked. (A key that made no
            // identifier yet is kept: a purge of an idle buffer draws nothing.)
            if tracked != 0 || identifiers.batchKeysIssued != 0 { identifiers.rekey() }
            tracked = 0
        }
    }
}

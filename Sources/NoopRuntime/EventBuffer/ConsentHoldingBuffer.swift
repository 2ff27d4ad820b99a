import FeatureGate

/// A ``GatedEventBuffer`` front that holds events in memory while a consent category is still undecided, instead
/// of refusing them: "not asked yet" is not "no".
///
/// ```swift
/// let events = await ConsentHoldingBuffer(buffer: buffer, consent: consent, category: .analytics, capacity: 50)
/// events.track(event)   // before the banner is answered: .heldUntilConsent, in memory
/// // the user grants analytics: the held events join the buffer, oldest first, then flush as usual
/// ```
///
/// - While the buffer is open, ``track(_:)`` passes events straight to it.
/// - While it is closed and the category's status is `unknown`, events are held **in memory only**: at most
///   ``capacity`` of them, the oldest dropped first (``droppedCount``). They are never written, never sent and
///   never handed to a backend, and at process exit they are simply gone.
/// - When the category is granted, the held events are tracked into the buffer, oldest first. Each is the value
///   the SDK tracked, so a capture time inside it stays the capture time; the buffer's own rules apply (if the
///   gate is still closed for another reason, such as the app switching the feature off, they are refused). A
///   buffer that follows consent stamps them with the consent in force then, the grant that let them in, after
///   the grant's own consent change.
/// - When the category is denied or restricted, the held events are dropped and counted (``purgedCount``).
/// - Otherwise (the buffer closed and the category decided) events are refused as the buffer refuses them.
///
/// ## When to use it
/// Use it for events the user would expect to be counted once they agree, tracked before the consent banner is
/// answered: the first screen view, the install's first session. Do not use it when the data must not exist
/// even in memory without consent (precise location, anything sensitive), when a denial is the likely answer
/// and holding would only waste memory, or when the feature is off for a reason other than undecided consent:
/// the hold follows the category's status only.
///
/// Thread safety: every method may be called from any thread.
public final class ConsentHoldingBuffer<Event: Sendable>: Sendable {
    /// The buffer that receives events once the category is granted.
    public let buffer: GatedEventBuffer<Event>
    /// The consent category whose undecided status holds events.
    public let category: ConsentCategory
    /// The most events held at once.
    public let capacity: Int

    private let state: LockedValue<State>
    private let observation: ObservationToken

    /// Creates the hold and reads the category's current status.
    ///
    /// - Precondition: `capacity >= 1`.
    public init(
        buffer: GatedEventBuffer<Event>,
        consent: ConsentManager,
        category: ConsentCategory,
        capacity: Int
    ) async {
        precondition(capacity >= 1, "capacity must be at least 1")
        self.buffer = buffer
        self.category = category
        self.capacity = capacity
        let state = LockedValue(State())
        self.state = state
        // Observe first, then read: a change in between is delivered, and wins over the read.
        observation = consent.observe { change in
            guard change.category == category else { return }
            Self.apply(change.current, to: state, buffer: buffer)
        }
        let status = await consent.status(for: category)
        state.withLock { state in
            if !state.hasObservedChange { state.status = status }
        }
    }

    /// Tracks `event`: into the buffer while it is open, held while the category is undecided, refused otherwise.
    ///
    /// - Returns: What became of the event: ``TrackOutcome/accepted`` (queued in the buffer),
    ///   ``TrackOutcome/heldUntilConsent`` (in memory until the category is answered), or
    ///   ``TrackOutcome/refused(_:)`` with why (nothing kept). Before this release it returned a `Bool`, `true` for
    ///   accepted or held: that is ``TrackOutcome/isKept``.
    @discardableResult
    public func track(_ event: Event) -> TrackOutcome {
        // One call into the buffer at most, so a refused event is counted once.
        if buffer.isOpen { return intoBuffer(event) }
        let (held, status) = state.withLock { state -> (Bool, ConsentStatus) in
            guard state.status == .unknown, !buffer.isOpen else { return (false, state.status) }
            if state.held.count == capacity {
                state.held.removeFirst()
                state.dropped += 1
            }
            state.held.append(event)
            return (true, state.status)
        }
        if held { return .heldUntilConsent }
        return intoBuffer(event, status: status)
    }

    /// Tracks `event` into the buffer; a refusal says why: the category's refusal (`status`) or the closed gate.
    private func intoBuffer(_ event: Event, status: ConsentStatus? = nil) -> TrackOutcome {
        do {
            try buffer.track(event)
            return .accepted
        } catch {
            if let status, status.isRefusal || status == .expired { return .refused(.consent(category, status)) }
            return .refused(.gateClosed(buffer.features))
        }
    }

    /// Events held in memory right now.
    public var heldCount: Int { state.withLock { $0.held.count } }
    /// Events dropped because the hold was full.
    public var droppedCount: Int { state.withLock { $0.dropped } }
    /// Held events dropped because the category was denied or restricted.
    public var purgedCount: Int { state.withLock { $0.purged } }
    /// Held events handed to the buffer on a grant (accepted or refused by it).
    public var releasedCount: Int { state.withLock { $0.released } }

    /// Drops every held event and returns how many went. Counted in ``purgedCount``.
    @discardableResult
    public func purge() -> Int {
        state.withLock { state in
            let count = state.held.count
            state.held.removeAll()
            state.purged += count
            return count
        }
    }

    private static func apply(_ status: ConsentStatus, to state: LockedValue<State>, buffer: GatedEventBuffer<Event>) {
        let released: [Event] = state.withLock { state in
            state.hasObservedChange = true
            state.status = status
            switch status {
            case .unknown:
                return []
            case .granted:
                defer { state.held.removeAll() }
                state.released += state.held.count
                return state.held
            default:
                state.purged += state.held.count
                state.held.removeAll()
                return []
            }
        }
        for event in released { _ = try? buffer.track(event) }
    }

    private struct State {
        var status = ConsentStatus.unknown
        var hasObservedChange = false
        var held: [Event] = []
        var dropped = 0
        var purged = 0
        var released = 0
    }
}

/// What ``ConsentHoldingBuffer/track(_:)`` did with an event.
public enum TrackOutcome: Sendable, Hashable, CustomStringConvertible {
    /// Queued in the buffer: delivered at a flush while its features stay on.
    case accepted
    /// Held in memory (never written, never sent) because the category is not answered yet: queued in the buffer if
    /// it is granted, dropped if it is refused.
    case heldUntilConsent
    /// Not kept anywhere; the payload says why.
    case refused(Refusal)

    /// Why an event was refused.
    public enum Refusal: Sendable, Hashable {
        /// The category was answered with this status: `denied`, `restricted`, or `expired` (an answer that ran
        /// out is not consent).
        case consent(ConsentCategory, ConsentStatus)
        /// The buffer's features are off for another reason than this category's answer: the app switched one
        /// off, the server's kill switch, another category that maps it, revoke-all.
        case gateClosed(Feature)
    }

    /// Whether the event was kept: accepted or held (what `track` returned as `true` before this release).
    public var isKept: Bool {
        if case .refused = self { return false }
        return true
    }

    /// `accepted`, `held until consent`, `refused: analytics denied`, `refused: the gate is closed for [analytics]`.
    public var description: String {
        switch self {
        case .accepted: "accepted"
        case .heldUntilConsent: "held until consent"
        case .refused(.consent(let category, let status)): "refused: \(category) \(status)"
        case .refused(.gateClosed(let features)): "refused: the gate is closed for \(features)"
        }
    }
}

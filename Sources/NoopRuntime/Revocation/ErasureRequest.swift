import FeatureGate
import Foundation

/// The one request revoke-all may send to ask the server to erase what it holds about this install.
///
/// It goes out through ``GatedTransport/sendExitRequest(_:permit:)`` with the runtime's
/// ``SubsystemRuntime/exitPermit``, so it passes the closed gate at most once per period in which something ran.
/// ``ConsentRevocation/revokeAll(source:erasure:)`` builds it after the subsystems have purged, handing the
/// builder the anonymous identifier as it was *before* the revocation deleted it, so the request can name
/// whose data to erase.
public struct ErasureRequest: Sendable {
    /// `Idempotency-Key`: the header every attempt of one revocation's erasure request carries, with the same
    /// value (``RevocationReport/requestKey``), so the server can drop duplicates. A request is sent again after
    /// a kill, so the server must expect it at least once, maybe more.
    public static let idempotencyKeyHeader = "Idempotency-Key"

    /// The transport it goes through. Any of the SDK's gated transports will do: an exit request ignores the
    /// gate, and the ledger counts it under this transport's features.
    public var transport: GatedTransport
    /// Builds the request from the anonymous identifier that existed when revoke-all began (`nil` when there was
    /// none).
    public var makeRequest: @Sendable (_ anonymousIdentifier: UUID?) -> TransportRequest

    /// Creates an erasure request built by `makeRequest` and sent through `transport`.
    public init(
        via transport: GatedTransport,
        makeRequest: @escaping @Sendable (_ anonymousIdentifier: UUID?) -> TransportRequest
    ) {
        self.transport = transport
        self.makeRequest = makeRequest
    }
}

/// What became of revoke-all's erasure request.
///
/// The erasure is owed until the server accepts it: only a 2xx answer is ``sent(_:)``. A 408, 429 or 5xx
/// (``retryLater(_:notBefore:)``), a redirect (``redirected(_:)``, never followed) or a transport failure
/// (``failed(_:)``) leaves it owed, sent again with the same idempotency key at the next
/// ``ConsentRevocation/revokeAll(source:erasure:)`` or ``ConsentRevocation/finishPendingRevocation(source:erasure:)``,
/// and not before a `Retry-After` the server gave has passed (``waitingForRetryAfter(until:)``). Any other 4xx is
/// ``rejected(_:)``: a failure of the revocation, not retried.
public enum ErasureOutcome: Sendable, CustomStringConvertible {
    /// No erasure request was passed to revoke-all.
    case notRequested
    /// Not sent: no feature was enabled when revoke-all began, so there was no enabled → disabled edge and a
    /// disabled SDK sends nothing. (A revoke-all after an earlier one ends here.)
    case nothingWasEnabled
    /// Not sent, and nothing is owed: no anonymous identifier was issued (none existed when revoke-all began) and
    /// no request went out through the erasure's transport counter in this process, so the server holds nothing
    /// it could link to this install. The erasure is done.
    case nothingToErase
    /// Not sent: the runtime's exit permit was not armed (no subsystem has started since the last exit request)
    /// or another caller spent it first.
    case refusedNoPermit
    /// Sent and accepted: the server answered 2xx with this response. The erasure is done.
    case sent(TransportResponse)
    /// The server answered 408, 429 or 5xx: still owed, sent again at the next call or start, not before
    /// `notBefore` when the server gave a `Retry-After` (capped at `RetryAfter.maximum`).
    case retryLater(TransportResponse, notBefore: Date?)
    /// The server answered a redirect (3xx), which an erasure never follows (its identifier and idempotency key
    /// must not go to another endpoint): still owed. Point the request at the final endpoint.
    case redirected(TransportResponse)
    /// The server refused the request with this 4xx (other than 408 and 429): not retried, and reported as a
    /// failure of the revocation (``RevocationFailure/erasureRejected(statusCode:)``).
    case rejected(TransportResponse)
    /// Not sent: the server asked to wait until this time (`Retry-After`) and it has not passed. Still owed.
    case waitingForRetryAfter(until: Date)
    /// The permit was spent and the send failed with this error. It is not retried in this call: the pending
    /// revocation keeps it owed, and ``ConsentRevocation/finishPendingRevocation(source:erasure:)`` sends it again.
    case failed(any Error)

    /// Whether the server accepted the request (a 2xx answer): the erasure is done.
    public var wasSent: Bool {
        if case .sent = self { return true }
        return false
    }

    /// The outcome of a request the server answered with `response`, at `now` (for `Retry-After`).
    static func answered(_ response: TransportResponse, now: Date) -> ErasureOutcome {
        switch response.statusCode {
        case 200..<300: .sent(response)
        case 300..<400: .redirected(response)
        case 408, 429, 500..<600:
            .retryLater(
                response,
                notBefore: RetryAfter.delay(in: response, now: now).map {
                    now.addingTimeInterval(TimeInterval($0.components.seconds))
                })
        default: .rejected(response)
        }
    }

    /// `sent: 200`, `refused: no exit permit`, and so on.
    public var description: String {
        switch self {
        case .notRequested: "not requested"
        case .nothingWasEnabled: "not sent: nothing was enabled, so nothing may be sent"
        case .nothingToErase: "nothing to erase on the server: no identifier was issued"
        case .refusedNoPermit: "refused: no exit permit (nothing has run since the last exit request)"
        case .sent(let response): "sent: the server accepted it (\(response.statusCode))"
        case .retryLater(let response, let notBefore):
            "not accepted: the server answered \(response.statusCode) (still owed: sent again at the next call or start"
                + (notBefore.map { ", not before \($0)" } ?? "") + ")"
        case .redirected(let response):
            "not accepted: the server answered \(response.statusCode), a redirect"
                + (response.header("Location").map { " to \(UntrustedText.escaped($0))" } ?? "")
                + ", which an erasure never follows (still owed: point the request at the final endpoint)"
        case .rejected(let response): "rejected: the server answered \(response.statusCode) (not retried)"
        case .waitingForRetryAfter(let until):
            "not sent: the server asked to wait until \(until) (still owed)"
        case .failed(let error): "failed: \(error) (still owed: sent again at the next start)"
        }
    }
}

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
public enum ErasureOutcome: Sendable, CustomStringConvertible {
    /// No erasure request was passed to revoke-all.
    case notRequested
    /// Not sent: no feature was enabled when revoke-all began, so there was no enabled → disabled edge and a
    /// disabled SDK sends nothing. (A revoke-all after an earlier one ends here.)
    case nothingWasEnabled
    /// Not sent: the runtime's exit permit was not armed (no subsystem has started since the last exit request)
    /// or another caller spent it first.
    case refusedNoPermit
    /// Sent; the server answered with this response (check ``TransportResponse/isSuccess``).
    case sent(TransportResponse)
    /// The permit was spent and the send failed with this error. It is not retried in this call: the pending
    /// revocation keeps it owed, and ``ConsentRevocation/finishPendingRevocation(source:erasure:)`` sends it again.
    case failed(any Error)

    /// Whether the request reached the server and got an answer (any status code).
    public var wasSent: Bool {
        if case .sent = self { return true }
        return false
    }

    /// `sent: 200`, `refused: no exit permit`, and so on.
    public var description: String {
        switch self {
        case .notRequested: "not requested"
        case .nothingWasEnabled: "not sent: nothing was enabled, so nothing may be sent"
        case .refusedNoPermit: "refused: no exit permit (nothing has run since the last exit request)"
        case .sent(let response): "sent: the server answered \(response.statusCode)"
        case .failed(let error): "failed: \(error) (still owed: sent again at the next start)"
        }
    }
}

import Foundation

/// A server's `Retry-After` on a `429 Too Many Requests` or `503 Service Unavailable`: how long to send nothing
/// more to that endpoint.
///
/// The erasure request (``ConsentRevocation``), the event buffer (``GatedEventBuffer``, through
/// ``RetryAfterError``) and the remote-data refresher obey it: no request to that endpoint before it passes. It is
/// capped at ``maximum`` (1 day), so a hostile or mistaken value cannot silence an endpoint for longer (a kill
/// switch's lift, say, always reaches the app within a day). It is read only on 429 and 503, as HTTP defines it
/// there; on any other status it is ignored.
package enum RetryAfter {
    /// The longest wait obeyed: 1 day. A longer value counts as 1 day.
    package static let maximum: Duration = .seconds(86_400)

    /// The statuses whose `Retry-After` is obeyed: 429 and 503.
    package static let statusCodes: Set<Int> = [429, 503]

    /// How long `response` asks to wait, capped at ``maximum``, or `nil` when it does not ask (another status, no
    /// field, or a value that is neither delta-seconds nor an HTTP date). A date in the past is no wait (`.zero`).
    ///
    /// - Parameters:
    ///   - response: The server's answer.
    ///   - now: The current time, to turn an HTTP date into a wait.
    package static func delay(in response: TransportResponse, now: Date = Date()) -> Duration? {
        guard statusCodes.contains(response.statusCode), let value = response.header("Retry-After") else {
            return nil
        }
        return delay(parsing: value, now: now)
    }

    /// Reads a `Retry-After` value: delta-seconds (`120`) or an HTTP date (`Fri, 27 Nov 2026 09:00:00 GMT`, or
    /// the obsolete RFC 850 and asctime forms), capped at ``maximum``; `nil` when it is neither.
    package static func delay(parsing value: String, now: Date = Date()) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        let cap = Double(maximum.components.seconds)
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // Digits only; a number too long for Double's integers is past the cap anyway.
            return .seconds(min(Double(text) ?? cap, cap))
        }
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) {
                return .seconds(min(max(date.timeIntervalSince(now).rounded(.up), 0), cap))
            }
        }
        return nil
    }

    /// A monotonic clock in seconds since it was made: what a `Retry-After` wait is measured on unless a test
    /// injects its own.
    package static func monotonicSeconds() -> @Sendable () -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        return {
            let elapsed = clock.now - start
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
    }
}

/// What an ``EventBackend`` throws when its server answered 429 or 503 with a `Retry-After`: the buffer keeps the
/// batch and sends nothing more to that backend until the wait has passed (see ``GatedEventBuffer``).
public struct RetryAfterError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The status the server answered.
    public var statusCode: Int
    /// How long the server asked to wait, capped at `RetryAfter.maximum`.
    public var delay: Duration

    /// An error for a server that answered `statusCode` and asked to wait `delay` (capped at
    /// `RetryAfter.maximum`).
    public init(statusCode: Int, delay: Duration) {
        self.statusCode = statusCode
        self.delay = min(max(delay, .zero), RetryAfter.maximum)
    }

    /// The error `response` calls for, or `nil` when it asks for no wait (see `RetryAfter.delay(in:now:)`).
    public init?(response: TransportResponse, now: Date = Date()) {
        guard let delay = RetryAfter.delay(in: response, now: now) else { return nil }
        self.init(statusCode: response.statusCode, delay: delay)
    }

    /// `the server answered 503 and asked to retry after 30 s`.
    public var description: String {
        "the server answered \(statusCode) and asked to retry after \(delay.components.seconds) s"
    }
}

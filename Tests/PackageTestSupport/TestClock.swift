import Foundation

/// A wall clock tests move by hand, so nothing that waits for time has to sleep.
public final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var time: Date
    private let start: Date

    /// A clock that reads `start` until moved.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        self.start = start
        time = start
    }

    /// The time now.
    public var now: Date { lock.withLock { time } }

    /// Seconds since the clock's start: a monotonic reading for the clocks that count from an arbitrary origin.
    public var seconds: Double { lock.withLock { time.timeIntervalSince(start) } }

    /// Moves the clock `seconds` forward.
    public func advance(by seconds: TimeInterval) { lock.withLock { time = time.addingTimeInterval(seconds) } }
}

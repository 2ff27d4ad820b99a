import FeatureGate
import Foundation

#if canImport(os)
import os
#endif

/// An event backend that is always there: it writes each event, one line each, to the unified log (`os.Logger`) on
/// Apple platforms and to standard error elsewhere.
///
/// Gated like any other backend: it sees only what a ``GatedEventBuffer`` delivers, so nothing while the buffer's
/// features are off. Use it to watch what an SDK would send, in development or as the one backend of an SDK that
/// has no server yet.
///
/// On Apple platforms the events are logged at the `info` level under `subsystem` and `category`, their text
/// marked private (shown as `<private>` unless a debugger is attached or the log is configured otherwise) unless
/// `isPublic` is true.
public struct LogEventBackend<Event: Sendable>: EventBackend {
    /// `log`, or the name given.
    public let name: String
    private let format: @Sendable (Event) -> String
    private let write: @Sendable (String) -> Void

    /// Writes events to the unified log (Apple platforms) or standard error (elsewhere).
    ///
    /// - Parameters:
    ///   - name: The backend's name in flush reports.
    ///   - subsystem: The unified log's subsystem, such as your SDK's bundle identifier.
    ///   - category: The unified log's category.
    ///   - isPublic: Whether the unified log may show the events' text outside a debugging session.
    ///   - format: How an event is written; `String(describing:)` by default.
    public init(
        _ name: String = "log",
        subsystem: String = "FeatureGate",
        category: String = "events",
        isPublic: Bool = false,
        format: @escaping @Sendable (Event) -> String = { String(describing: $0) }
    ) {
        self.init(name: name, format: format, write: Self.systemWriter(subsystem, category, isPublic: isPublic))
    }

    /// Writes each line with `write`: the seam tests use.
    package init(
        name: String, format: @escaping @Sendable (Event) -> String, write: @escaping @Sendable (String) -> Void
    ) {
        self.name = name
        self.format = format
        self.write = write
    }

    /// Writes one line per event, `NAME: EVENT`. Never throws.
    public func deliver(_ events: [Event]) async throws {
        for event in events { write("\(name): \(format(event))") }
    }

    private static func systemWriter(
        _ subsystem: String, _ category: String, isPublic: Bool
    ) -> @Sendable (String) -> Void {
        #if canImport(os)
        // Only read, from any thread, as the unified log allows; declared unsafe so this compiles whether or not the
        // SDK at hand marks `Logger` Sendable.
        nonisolated(unsafe) let logger = Logger(subsystem: subsystem, category: category)
        return { line in
            if isPublic {
                logger.info("\(line, privacy: .public)")
            } else {
                logger.info("\(line, privacy: .private)")
            }
        }
        #else
        return { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
        #endif
    }
}

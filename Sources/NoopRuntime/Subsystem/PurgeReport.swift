/// What a purge deleted: files, queued items and identifiers, and anything it failed to delete.
public struct PurgeReport: Sendable, Hashable, CustomStringConvertible {
    /// The files deleted, as the subsystem names them (relative to its directory, or absolute).
    public var removedFiles: [String]
    /// How many queued items (events, pending requests) were dropped from memory or disk.
    public var droppedItems: Int
    /// The identifiers reset (such as `"channelID"`), by name; never the values.
    public var resetIdentifiers: [String]
    /// What could not be deleted, with the reason. Empty when the purge was complete.
    public var failures: [String]

    /// Creates a report.
    public init(
        removedFiles: [String] = [],
        droppedItems: Int = 0,
        resetIdentifiers: [String] = [],
        failures: [String] = []
    ) {
        self.removedFiles = removedFiles
        self.droppedItems = droppedItems
        self.resetIdentifiers = resetIdentifiers
        self.failures = failures
    }

    /// A purge that found nothing.
    public static let empty = PurgeReport()

    /// Whether the purge deleted nothing and failed at nothing.
    public var isEmpty: Bool {
        removedFiles.isEmpty && droppedItems == 0 && resetIdentifiers.isEmpty && failures.isEmpty
    }

    /// Adds what `other` deleted to this report.
    public mutating func merge(_ other: PurgeReport) {
        removedFiles += other.removedFiles
        droppedItems += other.droppedItems
        resetIdentifiers += other.resetIdentifiers
        failures += other.failures
    }

    /// `2 files, 5 items, 1 identifier` (and failures, if any).
    public var description: String {
        var parts = [
            "\(removedFiles.count) file\(removedFiles.count == 1 ? "" : "s")",
            "\(droppedItems) item\(droppedItems == 1 ? "" : "s")",
            "\(resetIdentifiers.count) identifier\(resetIdentifiers.count == 1 ? "" : "s")",
        ]
        if !failures.isEmpty { parts.append("\(failures.count) failed: \(failures.joined(separator: "; "))") }
        return parts.joined(separator: ", ")
    }
}

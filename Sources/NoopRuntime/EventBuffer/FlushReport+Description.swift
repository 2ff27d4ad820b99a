extension FlushReport: CustomStringConvertible {
    /// One line: `flushed: queue-file delivered 4 events; upload failed after 3 attempts (collector down)`,
    /// `purged 5 queued events: the gate was closed`, or `nothing done: another flush was under way`.
    public var description: String {
        switch outcome {
        case .flushed:
            let deliveries = backends.map(\.description)
            var text = "flushed: " + (deliveries.isEmpty ? "nothing was queued" : deliveries.joined(separator: "; "))
            if purgedEvents > 0 { text += "; purged \(Self.events(purgedEvents))" }
            return text
        case .purged:
            return "purged \(Self.events(purgedEvents)): the gate was closed, nothing was delivered"
        case .alreadyFlushing:
            return "nothing done: another flush was under way"
        }
    }

    static func events(_ count: Int) -> String { "\(count) queued event\(count == 1 ? "" : "s")" }
}

extension FlushReport.Outcome: CustomStringConvertible {
    /// `flushed`, `purged` or `already flushing`.
    public var description: String {
        switch self {
        case .flushed: "flushed"
        case .purged: "purged"
        case .alreadyFlushing: "already flushing"
        }
    }
}

extension BackendDelivery: CustomStringConvertible {
    /// `upload delivered 4 events`, `upload failed after 3 attempts (collector down)`, and so on.
    public var description: String {
        let batch = "\(events) event\(events == 1 ? "" : "s")"
        let tries = "\(attempts) attempt\(attempts == 1 ? "" : "s")"
        return switch result {
        case .delivered: "\(backend) delivered \(batch)" + (attempts > 1 ? " after \(tries)" : "")
        case .failed(let error): "\(backend) failed after \(tries) (\(error)); \(batch) kept for the next flush"
        case .abandonedGateClosed: "\(backend) abandoned \(batch): the gate closed, so they were purged"
        case .cancelled: "\(backend) cancelled after \(tries); \(batch) kept unless revoked"
        }
    }
}

extension BackendDelivery.Result: CustomStringConvertible {
    /// `delivered`, `failed: collector down`, `abandoned: the gate closed` or `cancelled`.
    public var description: String {
        switch self {
        case .delivered: "delivered"
        case .failed(let error): "failed: \(error)"
        case .abandonedGateClosed: "abandoned: the gate closed"
        case .cancelled: "cancelled"
        }
    }
}

import FeatureGate
import Foundation
import NoopRuntime

/// Message center: fetches the inbox over HTTP and caches it in a file.
final class MessageCenterSubsystem: Subsystem {
    let name = "message-center"
    let requiredFeatures: Feature = .messageCenter
    private let storage: GatedStorage
    private let transport: GatedTransport

    init(storage: GatedStorage, transport: GatedTransport) {
        self.storage = storage
        self.transport = transport
    }

    func start() async throws {
        let response = try await transport.send(TransportRequest(method: "GET", path: "/api/inbox"))
        guard response.isSuccess else { throw DemoError("inbox answered \(response.statusCode)") }
        try storage.write(response.body, to: "inbox.json")
    }

    func stop(reason: StopReason) async {}

    func purge() async -> PurgeReport {
        do { return PurgeReport(removedFiles: try storage.purge().map { "message-center/" + $0 }) } catch {
            return PurgeReport(failures: ["message-center files: \(error)"])
        }
    }
}

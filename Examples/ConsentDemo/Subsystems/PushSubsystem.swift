import FeatureGate
import Foundation
import NoopRuntime

/// Push: registers a device token over HTTP and keeps the registration in a file. On the enabled → disabled
/// edge it sends Airship's channel opt-out, once, through the one-shot permit, then forgets the channel.
final class PushSubsystem: Subsystem {
    let name = "push"
    let requiredFeatures: Feature = .push
    private let storage: GatedStorage
    private let transport: GatedTransport
    private let channelID = LockedValue<String?>(nil)

    init(storage: GatedStorage, transport: GatedTransport) {
        self.storage = storage
        self.transport = transport
    }

    func start() async throws {
        let channel = UUID().uuidString.lowercased()
        let token = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let body = try JSONSerialization.data(
            withJSONObject: ["channelID": channel, "token": token], options: .sortedKeys)
        let response = try await transport.send(
            TransportRequest(method: "POST", path: "/api/push/register", body: body))
        guard response.isSuccess else { throw DemoError("push registration answered \(response.statusCode)") }
        try storage.write(body, to: "registration.json")
        channelID.withLock { $0 = channel }
    }

    func stop(reason: StopReason) async {
        guard case .featuresDisabled(_, let optOut) = reason, let channel = channelID.withLock({ $0 }) else { return }
        let body = Data(#"{"channelID":"\#(channel)","optIn":false}"#.utf8)
        _ = try? await transport.sendExitRequest(
            TransportRequest(method: "POST", path: "/api/push/opt-out", body: body),
            permit: optOut
        )
    }

    func purge() async -> PurgeReport {
        var report = PurgeReport()
        do { report.removedFiles = try storage.purge().map { "push/" + $0 } } catch {
            report.failures.append("push files: \(error)")
        }
        if channelID.withLock({ $0 != nil }) {
            channelID.withLock { $0 = nil }
            report.resetIdentifiers = ["channelID", "pushToken"]
        }
        return report
    }
}

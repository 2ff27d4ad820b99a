import FeatureGate
import Foundation
import NoopRuntime

/// Contacts: a contact identifier kept in a file and identified to the server.
final class ContactsSubsystem: Subsystem {
    let name = "contacts"
    let requiredFeatures: Feature = .contacts
    private let storage: GatedStorage
    private let transport: GatedTransport

    init(storage: GatedStorage, transport: GatedTransport) {
        self.storage = storage
        self.transport = transport
    }

    func start() async throws {
        let contact: String
        if let stored = try storage.read("contact.json") {
            contact = String(decoding: stored, as: UTF8.self)
        } else {
            contact = #"{"contactID":"\#(UUID().uuidString.lowercased())"}"#
            try storage.write(Data(contact.utf8), to: "contact.json")
        }
        _ = try await transport.send(
            TransportRequest(method: "POST", path: "/api/contacts/identify", body: Data(contact.utf8))
        )
    }

    func stop(reason: StopReason) async {}

    func purge() async -> PurgeReport {
        do {
            let removed = try storage.purge()
            return PurgeReport(
                removedFiles: removed.map { "contacts/" + $0 },
                resetIdentifiers: removed.isEmpty ? [] : ["contactID"]
            )
        } catch {
            return PurgeReport(failures: ["contacts files: \(error)"])
        }
    }
}

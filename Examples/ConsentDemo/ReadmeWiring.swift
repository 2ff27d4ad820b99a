import FeatureGate
import FeatureGateStack
import Foundation
import NoopRuntime

/// The README's event, as its "Use it" section declares it.
private struct Tap: Codable, Sendable { var button: String }

/// `--readme N`: the README's "Use it" steps 1 to 3 as written, with its real `URLSessionTransport`, then `N` events
/// tracked and a flush. `scripts/verify-silence.sh` traces it with every feature off: creating the transport and
/// tracking must touch no file, directory or socket.
func runReadmeWiring(
    configuration: PrivacyConfiguration, policy: ConsentPolicy, dataDirectory: URL, events count: Int
) async {
    let stack = PrivacyStack(configuration: configuration, consentPolicy: policy, dataDirectory: dataDirectory)
    let server = stack.transport(URLSessionTransport(baseURL: URL(string: "https://api.example.com")!), for: .analytics)
    // NoopRuntime's UploadBackend, as in the README (the demo has an uploader of its own by that name).
    let upload = NoopRuntime.UploadBackend<Tap>(transport: server, path: "/ev")
    let events = stack.eventBuffer(of: Tap.self, for: .analytics, backends: [upload])
    let analyticsFiles = stack.storage("analytics", for: .analytics)
    stack.register(StorageSubsystem("analytics", storage: analyticsFiles, eventQueues: [events]))
    stack.register(
        StorageSubsystem("push", storage: stack.storage("push", for: .push)) { storage in
            try storage.write(Data("device token".utf8), to: "registration.json")
        })
    let erasure = ErasureRequest(via: server) { TransportRequest(method: "DELETE", path: "/u/\($0?.uuidString ?? "")") }
    await stack.start(erasure: erasure)
    print("features  \(stack.privacy.enabledFeatures)")
    var refused = 0
    for index in 0..<count {
        do {
            try events.track(Tap(button: "button \(index)"))
        } catch {
            refused += 1
        }
    }
    print("tracked   \(count - refused) of \(count) event(s); refused \(refused)")
    print("flush     \(await events.flush())")
}

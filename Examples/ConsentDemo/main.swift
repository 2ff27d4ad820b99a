// consent-demo: a small SDK whose subsystems (push, analytics, message center, contacts) do real file and
// loopback-HTTP I/O, driven through a consent flow by NoopRuntime. With every feature off it stores nothing
// and opens no socket; scripts/verify-silence.sh proves it with strace.
import FeatureGate
import Foundation
import NoopRuntime

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

signal(SIGPIPE, SIG_IGN)

let options: DemoOptions
do {
    options = try DemoOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    let message = String(describing: error)
    FileHandle.standardError.write(
        Data(((message.isEmpty ? "" : "consent-demo: \(message)\n\n") + DemoOptions.usage + "\n").utf8))
    exit(message.isEmpty ? 0 : 64)
}

let config: (features: Feature, note: String)
do {
    config = try readDemoConfig(at: options.configPath)
} catch {
    FileHandle.standardError.write(Data("consent-demo: \(error)\n".utf8))
    exit(65)
}

let isTemporaryDirectory = options.dataDirectory == nil
let dataDirectory =
    options.dataDirectory
    ?? URL(filePath: NSTemporaryDirectory(), directoryHint: .isDirectory)
    .appending(path: "consent-demo-\(UUID().uuidString.lowercased())", directoryHint: .isDirectory)
let dataPath = dataDirectory.path(percentEncoded: false)

let sdk = DemoSDK(dataDirectory: dataDirectory, initialFeatures: config.features)
print("consent-demo: \(config.note)")
print("data dir: \(dataPath)\(isTemporaryDirectory ? " (temporary)" : "")")

sdk.runtime.start()
await sdk.runtime.settle()

var shownRequests = 0
var shownEvents: UInt64 = 0

@MainActor
func printTable(_ title: String) {
    print("\n== \(title)")
    print("features  \(sdk.privacy.enabledFeatures)")

    let files = (try? FileManager.default.subpathsOfDirectory(atPath: dataPath))?.sorted() ?? []
    let fileLines = files.compactMap { path -> String? in
        var isDirectory: ObjCBool = false
        let full = dataPath + (dataPath.hasSuffix("/") ? "" : "/") + path
        guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue else {
            return nil
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: full)[.size] as? Int) ?? 0
        return "\(path) (\(size) B)"
    }
    if !FileManager.default.fileExists(atPath: dataPath) {
        print("files     none (data dir not created)")
    } else {
        print("files     \(fileLines.isEmpty ? "none" : fileLines.joined(separator: "\n          "))")
    }

    let requests = sdk.collector.requests
    let new = requests.dropFirst(shownRequests).map(\.summary)
    shownRequests = requests.count
    let collectorState = sdk.collector.isRunning ? "" : " (collector never started: no socket opened)"
    print("requests  \(requests.count) received\(collectorState)\(new.isEmpty ? "" : "; new:")")
    for summary in new { print("            \(summary)") }

    let events = sdk.runtime.events(after: shownEvents)
    shownEvents = sdk.runtime.lastEventSequence
    for event in events { print("runtime   \(event)") }

    let rows = sdk.ledger.snapshot()
    if rows.isEmpty {
        print("ledger    nothing allowed, nothing refused")
    } else {
        for (index, row) in rows.enumerated() {
            let name = FeatureCatalog.builtIn.name(of: row.feature) ?? "\(row.feature)"
            print("\(index == 0 ? "ledger   " : "         ") \(name): \(row.counts)  (allowed/refused)")
        }
    }
}

printTable("step 0: start (\(config.features.isEmpty ? "everything off" : "\(config.features)"))")

for (index, step) in options.steps.enumerated() {
    var detail = ""
    switch step {
    case .enable(let features, _):
        sdk.privacy.enableFeatures(features)
    case .disable(let features, _):
        sdk.privacy.disableFeatures(features)
    case .track(let count):
        let (accepted, report) = await sdk.track(count)
        detail = " — \(accepted) of \(count) accepted"
        switch report.outcome {
        case .flushed:
            detail += "; flushed to " + report.backends.map { "\($0.backend) \($0.result)" }.joined(separator: ", ")
        case .purged: detail += "; gate closed: nothing flushed, nothing kept"
        case .alreadyFlushing: break
        }
    }
    await sdk.runtime.settle()
    printTable("step \(index + 1): \(step)\(detail)")
}

await sdk.runtime.shutdown()
if isTemporaryDirectory && FileManager.default.fileExists(atPath: dataPath) {
    try? FileManager.default.removeItem(at: dataDirectory)
    print("\nremoved the temporary data dir (pass --data-dir to keep the files)")
}

// A child process for FeatureGateTests' killed-writer test. It saves to a file store in a loop until it is
// killed, printing one line after the first save so the parent knows the loop is running.
//
//   feature-store-writer manager PATH     toggle features through a PrivacyManager backed by PATH
//   feature-store-writer blob PATH SIZE   save SIZE-byte records of one repeated byte, alternating A and B
//   feature-store-writer ledger PATH      append consent records to a FileConsentLedger at PATH
import FeatureGate
import Foundation

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: feature-store-writer manager|blob|ledger PATH [SIZE]\n".utf8))
    exit(2)
}
let store = FileFeatureStore(url: URL(filePath: arguments[2]))
nonisolated(unsafe) var announced = false  // single-threaded program
func announce() {
    guard !announced else { return }
    announced = true
    FileHandle.standardOutput.write(Data("saving\n".utf8))
}

switch arguments[1] {
case "manager":
    let manager = PrivacyManager(configuration: PrivacyConfiguration(enabledFeatures: []), store: store)
    while true {
        manager.enableFeatures([.analytics, .push])
        announce()
        manager.disableFeatures(.push)
        manager.enabledFeatures = .all
        manager.enabledFeatures = []
    }
case "blob":
    let size = arguments.count > 3 ? Int(arguments[3]) ?? 65_536 : 65_536
    let records = [Data(repeating: UInt8(ascii: "A"), count: size), Data(repeating: UInt8(ascii: "B"), count: size)]
    var index = 0
    while true {
        try store.save(records[index])
        announce()
        index ^= 1
    }
case "ledger":
    let ledger = FileConsentLedger(url: URL(filePath: arguments[2]))
    var status = ConsentStatus.granted
    while true {
        try ledger.append(
            ConsentRecord(
                category: .analytics,
                previousStatus: status == .granted ? .denied : .granted,
                newStatus: status,
                time: Date(),
                policyVersion: 1,
                source: .user
            )
        )
        announce()
        status = status == .granted ? .denied : .granted
    }
default:
    exit(2)
}

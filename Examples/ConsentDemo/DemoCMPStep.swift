import FeatureGate
import FeatureGateIAB
import Foundation

/// The `cmp:FILE` step: reads a JSON object of the IAB keys a consent platform writes and applies its answer
/// through a `CMPConsentSource`, as an app does when its CMP writes `UserDefaults`.
///
/// - Returns: The step's detail: each category's status as the CMP reads, and how many records were appended.
///   Diagnostics (a malformed signal, say) go into `notes`.
func applyCMPKeys(_ path: String, to consent: ConsentManager, notes: inout [String]) async -> String {
    guard let data = try? Data(contentsOf: URL(filePath: path)),
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    else {
        return " — cannot read \(path) as a JSON object of CMP keys; nothing applied"
    }
    var keys: [String: CMPValue] = [:]
    for (key, value) in object.sorted(by: { $0.key < $1.key }) {
        do {
            keys[key] = try CMPValue(foundationValue: value)
        } catch {
            notes.append("\(key): \(error); ignored")
        }
    }
    let source = CMPConsentSource(consentManager: consent, keys: keys)
    let refresh = await source.refresh()
    notes += refresh.consent.diagnostics.map(\.description)
    let statuses = refresh.consent.decisions.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
    let recorded = refresh.records.count
    return " — CMP says " + (statuses.isEmpty ? "nothing" : statuses.joined(separator: ", "))
        + "; \(recorded) change\(recorded == 1 ? "" : "s") recorded (source cmp)"
}

import FeatureGate
import Foundation

/// The design this package replaces: the enabled set behind an `NSRecursiveLock` (Airship iOS's `AirshipLock`).
///
/// Every read takes the lock; every write takes it, changes the set, then takes it again (recursively) to compare with
/// the last notified set and notify on a change, the way Airship's `notifyUpdate` does.
///
/// The model is generous to Airship. There, a read looks the stored value up by string key in the preference store's
/// cache, under that store's own lock, and subtracts the remote config's disabled set; a write also schedules a
/// `UserDefaults` write and posts a notification on the main queue. None of that is here, so ratios measured against
/// this gate are lower bounds for Airship itself.
final class AirshipStyleGate: @unchecked Sendable {  // every stored var is only touched under `lock`
    private let lock = NSRecursiveLock()
    private var enabled: Feature
    private var lastNotified: Feature
    private let onChange: @Sendable () -> Void

    init(enabledFeatures: Feature, onChange: @escaping @Sendable () -> Void = {}) {
        enabled = enabledFeatures
        lastNotified = enabledFeatures
        self.onChange = onChange
    }

    /// Airship's check: take the lock, read the set, release. Not inlined, like a public method of another module.
    @inline(never)
    func isEnabled(_ features: Feature) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if features.isEmpty { return enabled.isEmpty }
        return enabled.rawValue & features.rawValue == features.rawValue
    }

    /// Adds `features` under the lock and notifies if the set changed.
    @inline(never)
    func enableFeatures(_ features: Feature) {
        lock.lock()
        defer { lock.unlock() }
        enabled.formUnion(features)
        notifyIfChanged()
    }

    /// Removes `features` under the lock and notifies if the set changed.
    @inline(never)
    func disableFeatures(_ features: Feature) {
        lock.lock()
        defer { lock.unlock() }
        enabled.subtract(features)
        notifyIfChanged()
    }

    private func notifyIfChanged() {
        lock.lock()
        defer { lock.unlock() }
        guard enabled != lastNotified else { return }
        lastNotified = enabled
        onChange()
    }
}

extension AirshipStyleGate: ContendedGate {
    func check() -> Bool {
        isEnabled(.analytics)
    }

    func flip(_ on: Bool) {
        if on { enableFeatures(.push) } else { disableFeatures(.push) }
    }
}

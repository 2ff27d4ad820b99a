import FeatureGate
import Foundation

/// Reads the IAB keys from `UserDefaults`, where CMPs write them (the standard defaults unless told otherwise).
///
/// Values are converted by ``CMPValue/init(foundationValue:)``; any other stored value (a Boolean, a fraction) is
/// passed on as its description, which the key's reader then rejects as malformed.
public struct UserDefaultsCMPKeySource: CMPKeyValueSource, @unchecked Sendable {
    /// The defaults read. `UserDefaults` is thread-safe.
    public let defaults: UserDefaults
    private let isDataAvailable: @Sendable () -> Bool

    /// Reads from `defaults`; `isDataAvailable` says whether protected data can be read now (see
    /// `UserDefaultsReader` in FeatureGate: a locked device reads every key as absent).
    public init(_ defaults: UserDefaults = .standard, isDataAvailable: @escaping @Sendable () -> Bool = { true }) {
        self.defaults = defaults
        self.isDataAvailable = isDataAvailable
    }

    /// Whether protected data can be read now.
    public var isReadable: Bool { isDataAvailable() }

    /// The value stored under `key`, or `nil`.
    public func cmpValue(forKey key: String) -> CMPValue? {
        guard let object = defaults.object(forKey: key) else { return nil }
        do {
            return try CMPValue(foundationValue: object)
        } catch {
            return .string(String(describing: object))
        }
    }
}

extension CMPConsentSource {
    /// Refreshes when `UserDefaults` change (CMPs write their keys there), through a ``CMPRefresher``: the
    /// notifications are coalesced, the keys read once they settle, an unchanged snapshot skipped.
    ///
    /// `UserDefaults.didChangeNotification` is posted only for changes made *in this process*. A CMP that writes
    /// the keys from another process (an app extension sharing an app group's defaults) is not seen by it. Pass the
    /// notifications after which another process may have written them in `alsoOn`, typically the app becoming
    /// active (`UIApplication.didBecomeActiveNotification`, `NSApplication.didBecomeActiveNotification`), or call
    /// ``refresh()`` yourself at such moments: a refresh that finds the same answer applies nothing.
    ///
    /// - Parameters:
    ///   - settle: How long the keys must stay unchanged before they are read.
    ///   - notifications: Other notifications of `NotificationCenter.default` that refresh too.
    /// - Returns: The token that stops it: cancel it, or release it.
    public nonisolated func refreshOnUserDefaultsChanges(
        settle: Duration = .milliseconds(250), alsoOn notifications: [Notification.Name] = []
    ) -> ObservationToken {
        let refresher = CMPRefresher(source: self, settle: settle)
        // The observer objects are only handed back to removeObserver, which is thread-safe.
        nonisolated(unsafe) let observers = ([UserDefaults.didChangeNotification] + notifications).map { name in
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { _ in
                refresher.keysChanged()
            }
        }
        return ObservationToken {
            for observer in observers { NotificationCenter.default.removeObserver(observer) }
            refresher.stop()
        }
    }
}

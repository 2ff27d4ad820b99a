import Foundation

/// Tells when files and defaults that data protection kept unreadable (the device was locked) can be read again.
///
/// A prewarmed or background launch before the first unlock, or an extension running while the device is locked,
/// cannot read data protected with a stricter class than its files allow. FeatureGate fails closed then, and reads
/// again when told through this seam: ``PrivacyManager/reloadWhenProtectedDataBecomesAvailable(onAvailable:)`` and, for a
/// consent platform's keys, `CMPConsentSource.refreshWhenProtectedDataBecomesAvailable()` in FeatureGateIAB.
package protocol ProtectedDataAvailability: Sendable {
    /// Calls `handler` every time protected data becomes available, until the returned token is cancelled or
    /// released: once its `cancel()` returns, the handler is not running and is never called again. The handler
    /// may run on any thread.
    func whenAvailable(_ handler: @escaping @Sendable () -> Void) -> ObservationToken
}

/// Protected data availability as `NotificationCenter` posts it: by default, UIKit's
/// `UIApplication.protectedDataDidBecomeAvailableNotification`, matched by name, so FeatureGate links no UIKit.
///
/// Where nothing posts the notification (macOS, Linux), the handler never runs unless something posts `name`.
/// An app that links UIKit may pass `name: UIApplication.protectedDataDidBecomeAvailableNotification` itself.
package struct NotificationCenterProtectedDataAvailability: ProtectedDataAvailability, @unchecked Sendable {
    /// The name of UIKit's `UIApplication.protectedDataDidBecomeAvailableNotification`.
    package static let protectedDataDidBecomeAvailable = Notification.Name(
        "UIApplicationProtectedDataDidBecomeAvailable")

    /// The center observed; `NotificationCenter` is thread-safe.
    package let center: NotificationCenter
    /// The notification that means protected data became available.
    package let name: Notification.Name

    /// Follows `name` (UIKit's notification unless told otherwise) on `center`.
    package init(center: NotificationCenter = .default, name: Notification.Name = Self.protectedDataDidBecomeAvailable)
    {
        self.center = center
        self.name = name
    }

    /// Calls `handler` on every `name` notification posted to `center`, on the posting thread.
    package func whenAvailable(_ handler: @escaping @Sendable () -> Void) -> ObservationToken {
        // Stopped by the token: once cancel() returns, the handler is not running and is never called again.
        let observed = ObservedHandler<Void> { handler() }
        // The observer object is only handed back to removeObserver, which is thread-safe.
        nonisolated(unsafe) let observer = center.addObserver(forName: name, object: nil, queue: nil) { _ in
            observed.call(())
        }
        let center = UncheckedSendableCenter(center: center)
        return ObservationToken(stopping: observed) { center.center.removeObserver(observer) }
    }
}

/// `NotificationCenter` is thread-safe but not declared `Sendable` on every platform.
private struct UncheckedSendableCenter: @unchecked Sendable {
    let center: NotificationCenter
}

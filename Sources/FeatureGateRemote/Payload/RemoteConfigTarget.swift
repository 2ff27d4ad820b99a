/// The platform whose remote-data payloads are read: `app_config:<platform>` is merged over `app_config`.
public enum RemoteDataPlatform: String, Sendable, Hashable, CaseIterable {
    /// `app_config:ios`.
    case ios
    /// `app_config:android`.
    case android
}

/// Who a payload is read for: the platform, the SDK's version and the app's version.
///
/// Versions are matched by `IvyVersionConstraint`; a version it cannot read (such as `1.2 (45)`) matches only
/// the prefix forms and the constraint `+`.
public struct RemoteConfigTarget: Sendable, Hashable {
    /// The platform.
    public var platform: RemoteDataPlatform
    /// The SDK's version, matched by `sdk_versions`.
    public var sdkVersion: String
    /// The app's version, matched by `app_versions`.
    public var appVersion: String

    /// Creates a target.
    public init(platform: RemoteDataPlatform, sdkVersion: String, appVersion: String) {
        self.platform = platform
        self.sdkVersion = sdkVersion
        self.appVersion = appVersion
    }
}

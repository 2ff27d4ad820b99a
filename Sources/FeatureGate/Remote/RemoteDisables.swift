import Foundation

/// What a server's kill switch turns off, and the rule or name behind each flag.
public struct RemoteDisables: Sendable, Hashable {
    /// The flags the payload disables.
    public var features: Feature
    /// Per disabled flag (keyed by its raw value), the rule or name that disabled it, such as
    /// `disabled_features[0] "push"` or `disable_features[1]`. ``PrivacyManager/reason(for:)`` shows it.
    public var rules: [UInt: String]
    /// How long the payload asks to wait before asking the server again, in seconds, if it says.
    public var refreshInterval: Double?

    /// Creates a result. `rules` should name a rule for every flag of `features`.
    public init(features: Feature, rules: [UInt: String] = [:], refreshInterval: Double? = nil) {
        self.features = features
        self.rules = rules
        self.refreshInterval = refreshInterval
    }

    /// Nothing disabled.
    public static let none = RemoteDisables(features: [])

    /// The rule or name that disabled `flag`, if it is disabled.
    public func rule(for flag: Feature) -> String? { rules[flag.rawValue] }
}

/// Reads a server payload as a kill switch: which flags it disables for this app, and why.
///
/// `FeatureGateRemote` provides one for Airship's remote-data payloads. ``PrivacyManager`` calls it on the kept
/// payload at start-up and on every new payload; it must be a pure function of the payload (no I/O, no clock),
/// so the same bytes always give the same answer.
public protocol RemotePayloadInterpreter: Sendable {
    /// Returns what `payload` disables.
    ///
    /// - Throws: When the payload is invalid. The manager then keeps the layer it had.
    func disables(in payload: Data) throws -> RemoteDisables
}

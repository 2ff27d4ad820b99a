/// A set of features that an SDK may use, one bit per feature.
///
/// The built-in flags and their bit positions match Airship's `Features`, so stored values and integer
/// bitmasks carry over unchanged. Bits 3 and 7 are retired (Airship used them for chat and location) and are
/// never assigned. Bits 16–31 belong to SDK authors: declare them with ``custom(bit:)`` and give them config
/// names with ``FeatureCatalog/registering(_:as:)``.
///
/// The empty set is `[]`. There is deliberately no `.none`, which would clash with `Optional.none`.
///
/// Every member is `@inlinable`, so checking a flag from another module compiles down to integer arithmetic.
@frozen
public struct Feature: OptionSet, Sendable, Hashable {
    /// The bitmask. Bit positions are stable and shared with Airship.
    public let rawValue: UInt

    /// Creates a set from a raw bitmask. Unknown bits are kept; ``FeatureCatalog/mask(_:)`` drops them.
    @inlinable
    public init(rawValue: UInt) {
        self.rawValue = rawValue
    }

    /// In-app automation: in-app messages, scenes and surveys. Bit 0; config name `in_app_automation`.
    @inlinable public static var inAppAutomation: Feature { Feature(rawValue: 1 << 0) }

    /// Message center: the inbox. Bit 1; config name `message_center`.
    @inlinable public static var messageCenter: Feature { Feature(rawValue: 1 << 1) }

    /// Push notifications: token registration and delivery. Bit 2; config name `push`.
    @inlinable public static var push: Feature { Feature(rawValue: 1 << 2) }

    /// Analytics: events, sessions and uploads. Bit 4; config name `analytics`.
    @inlinable public static var analytics: Feature { Feature(rawValue: 1 << 4) }

    /// Tags and attributes on the channel. Bit 5; config name `tags_and_attributes`.
    @inlinable public static var tagsAndAttributes: Feature { Feature(rawValue: 1 << 5) }

    /// Contacts: named users and contact channels. Bit 6; config name `contacts`.
    @inlinable public static var contacts: Feature { Feature(rawValue: 1 << 6) }

    /// Feature flags evaluated from remote data. Bit 8; config name `feature_flags`.
    @inlinable public static var featureFlags: Feature { Feature(rawValue: 1 << 8) }

    /// The seven built-in flags together.
    ///
    /// This is *not* "every bit": custom flags an SDK registers are not in it. Use
    /// ``FeatureCatalog/allFeatures`` for the built-in flags plus the registered ones.
    @inlinable public static var all: Feature { Feature(rawValue: 0b1_0111_0111) }

    /// The lowest bit an SDK may use for a flag of its own.
    public static let firstCustomBit = 16

    /// The highest bit an SDK may use for a flag of its own.
    public static let lastCustomBit = 31

    /// A flag of the SDK's own, in bits 16 through 31.
    ///
    /// - Precondition: `bit` is in `16...31`. Lower bits belong to the built-in flags (and retired ones).
    public static func custom(bit: Int) -> Feature {
        precondition(
            (firstCustomBit...lastCustomBit).contains(bit),
            "custom feature bits are 16...31; \(bit) is reserved"
        )
        return Feature(rawValue: 1 << UInt(bit))
    }

    /// The single-bit flags in this set, lowest bit first.
    public var flags: [Feature] {
        var remaining = rawValue
        var result: [Feature] = []
        while remaining != 0 {
            let lowest = remaining & (~remaining &+ 1)
            result.append(Feature(rawValue: lowest))
            remaining &= ~lowest
        }
        return result
    }
}

extension Feature: CustomStringConvertible {
    /// The config names of the flags in the set, e.g. `[push, analytics]`.
    ///
    /// Bits without a built-in name print as `bit16` and so on. ``FeatureCatalog/names(of:)`` knows the names an
    /// SDK registered.
    public var description: String {
        "[" + FeatureCatalog.builtIn.names(of: self).joined(separator: ", ") + "]"
    }
}

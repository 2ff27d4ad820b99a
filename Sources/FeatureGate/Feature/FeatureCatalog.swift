/// The names that config files and tools use for feature flags, and the set of flags the gate knows.
///
/// The built-in catalog, ``builtIn``, holds Airship's seven flags under Airship's config names. An SDK that
/// declares flags of its own (bits 16–31) registers names for them and passes the resulting catalog to
/// ``PrivacyManager`` and to the config reader:
///
/// ```swift
/// let catalog = try FeatureCatalog.builtIn
///     .registering("crash_reports", as: .custom(bit: 16))
/// ```
///
/// A catalog is a value: registering returns a new catalog and never changes a shared one, so two SDKs in one
/// app cannot trample each other's names.
public struct FeatureCatalog: Sendable, Hashable {
    /// One named flag.
    public struct Entry: Sendable, Hashable {
        /// The name used in config files, lowercase `snake_case`.
        public let name: String
        /// The single-bit flag.
        public let feature: Feature
    }

    /// The named flags, built-in ones first, then registered ones in registration order.
    public private(set) var entries: [Entry]

    /// Every flag in the catalog: the bits the gate keeps. Stored and configured values are masked to it.
    public private(set) var allFeatures: Feature

    /// Airship's seven flags under Airship's config names.
    public static let builtIn = FeatureCatalog(entries: [
        Entry(name: "in_app_automation", feature: .inAppAutomation),
        Entry(name: "message_center", feature: .messageCenter),
        Entry(name: "push", feature: .push),
        Entry(name: "analytics", feature: .analytics),
        Entry(name: "tags_and_attributes", feature: .tagsAndAttributes),
        Entry(name: "contacts", feature: .contacts),
        Entry(name: "feature_flags", feature: .featureFlags),
    ])

    /// Words that mean sets rather than flags in config files; no flag may take them as its name.
    public static let reservedWords: Set<String> = ["all", "none"]

    private init(entries: [Entry]) {
        self.entries = entries
        self.allFeatures = Feature(rawValue: entries.reduce(0) { $0 | $1.feature.rawValue })
    }

    /// Returns a catalog that also knows `feature` under `name`.
    ///
    /// - Parameters:
    ///   - name: The config name. Lowercase letters, digits and underscores, starting with a letter.
    ///   - feature: A single flag in bits 16–31, usually ``Feature/custom(bit:)``.
    /// - Throws: ``FeatureCatalogError`` when the name is malformed, reserved or taken, or the flag is not a
    ///   single custom bit or is already named.
    public func registering(_ name: String, as feature: Feature) throws(FeatureCatalogError) -> FeatureCatalog {
        guard Self.isValidName(name) else { throw .invalidName(name) }
        guard !Self.reservedWords.contains(name) else { throw .reservedName(name) }
        guard entries.allSatisfy({ $0.name != name }) else { throw .nameTaken(name) }
        let bit = feature.rawValue.trailingZeroBitCount
        guard feature.rawValue.nonzeroBitCount == 1,
            (Feature.firstCustomBit...Feature.lastCustomBit).contains(bit)
        else { throw .notACustomFlag(feature.rawValue) }
        guard !allFeatures.contains(feature) else { throw .flagTaken(feature.rawValue) }
        var copy = self
        copy.entries.append(Entry(name: name, feature: feature))
        copy.allFeatures.insert(feature)
        return copy
    }

    /// The flag named `name`, or `nil` when the catalog has no such name.
    ///
    /// Matching is exact; config readers normalize case and spaces before asking.
    public func feature(named name: String) -> Feature? {
        entries.first { $0.name == name }?.feature
    }

    /// The config name of a single flag, or `nil` when it is not in the catalog.
    public func name(of flag: Feature) -> String? {
        entries.first { $0.feature == flag }?.name
    }

    /// The names of the flags in `features`, lowest bit first. Bits the catalog does not know print as `bitN`.
    public func names(of features: Feature) -> [String] {
        features.flags.map { name(of: $0) ?? "bit\($0.rawValue.trailingZeroBitCount)" }
    }

    /// `features` without the bits this catalog does not know.
    @inlinable
    public func mask(_ features: Feature) -> Feature {
        features.intersection(allFeatures)
    }

    private static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }
}

/// Why ``FeatureCatalog/registering(_:as:)`` refused a name or a flag.
public enum FeatureCatalogError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name is not lowercase `snake_case` starting with a letter.
    case invalidName(String)
    /// The name is `all` or `none`, which config files use for sets.
    case reservedName(String)
    /// Another flag already has this name.
    case nameTaken(String)
    /// The flag is not exactly one bit in 16–31. The payload is the raw value found.
    case notACustomFlag(UInt)
    /// The flag already has a name in this catalog. The payload is the raw value.
    case flagTaken(UInt)

    /// A sentence saying what was found and what was expected.
    public var description: String {
        switch self {
        case .invalidName(let name):
            "feature name \"\(name)\" is invalid: expected lowercase letters, digits and underscores, starting with a letter"
        case .reservedName(let name):
            "feature name \"\(name)\" is reserved: config files use it for a set of features"
        case .nameTaken(let name):
            "feature name \"\(name)\" is already registered"
        case .notACustomFlag(let raw):
            "feature 0x\(String(raw, radix: 16)) is not a custom flag: expected exactly one bit in 16...31"
        case .flagTaken(let raw):
            "feature 0x\(String(raw, radix: 16)) already has a name"
        }
    }
}

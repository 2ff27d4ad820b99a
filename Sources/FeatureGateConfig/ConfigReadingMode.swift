/// How forgiving a ``ConfigReader`` is. No mode ever enables a feature that the file does not name.
///
/// | | strict (default) | lenient | Airship-compatible |
/// |---|---|---|---|
/// | unknown name | error | dropped, warning | dropped, warning |
/// | missing `enabledFeatures` | error | error | every flag, warning |
/// | `chat`, `location` | dropped, warning | dropped, warning | dropped, warning |
/// | wrong type, malformed file | error | error | error |
///
/// A key that looks like a misspelling of `enabledFeatures` (`EnabledFeatures`, `enabled_features`) is an error
/// in every mode, even Airship-compatible: reading it as missing would turn a typo into "everything on".
public enum ConfigReadingMode: String, Sendable, Hashable, CaseIterable {
    /// Every name must be known; `enabledFeatures` must be present. Use it for files you write.
    case strict
    /// Unknown names are dropped with a warning, so a file written for a newer SDK still loads.
    case lenient
    /// Airship's reading: a missing `enabledFeatures` means every flag (with a warning), and unknown names are
    /// dropped with a warning, as in ``lenient``. Use it only to load existing `AirshipConfig.plist` files
    /// unchanged.
    case airshipCompatible
}

/// Bounds that keep a hostile or broken file from costing more than a small config should.
///
/// Going over a limit is an error diagnostic, never a crash or a hang.
public struct ConfigLimits: Sendable, Hashable {
    /// The largest file read, in bytes. Larger files are refused before parsing. Default 1 MiB.
    public var maximumFileSize: Int
    /// The deepest nesting of arrays and dictionaries. Default 64; values above 256 are read as 256, which keeps
    /// the parsers' recursion well inside a thread's stack.
    public var maximumDepth: Int
    /// The most values (of any kind, containers included) in one document. Default 100 000.
    public var maximumValueCount: Int
    /// The most entries `enabledFeatures` may list (array elements or comma-separated items). Default 256.
    public var maximumNameCount: Int

    /// Creates limits; the defaults suit any real config and Info.plist.
    public init(
        maximumFileSize: Int = 1 << 20,
        maximumDepth: Int = 64,
        maximumValueCount: Int = 100_000,
        maximumNameCount: Int = 256
    ) {
        self.maximumFileSize = maximumFileSize
        self.maximumDepth = maximumDepth
        self.maximumValueCount = maximumValueCount
        self.maximumNameCount = maximumNameCount
    }

    /// The default limits.
    public static let `default` = ConfigLimits()

    /// The depth the parsers enforce: ``maximumDepth`` clamped to 1...256.
    package var effectiveDepth: Int { min(max(maximumDepth, 1), 256) }
}

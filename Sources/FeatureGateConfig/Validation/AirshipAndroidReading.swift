import FeatureGate

/// What Airship Android enables on a first launch from an `airshipconfig.properties` file, its fallbacks included.
///
/// Follows Airship Android SDK 20.x (`urbanairship/android-library`: `AirshipConfigOptions.kt` at 12c87e7,
/// `util/PropertiesConfigParser.kt` at bc808e6, `PrivacyManager.kt` with `feature_flags` in `ALL` and in its name
/// map):
/// - the file is loaded with `java.util.Properties`; if loading fails (a malformed `\uXXXX`), nothing of it applies;
/// - every value is trimmed, and a key whose value is empty is dropped;
/// - `enabledFeatures` is an `Int` (Kotlin's `toInt()`: decimal, optional sign, 32 bits) unless it fails to parse or
///   is `-1`; stored as given, it reads back masked to `Feature.ALL`. Otherwise it is split on `[, ]+` (empty last
///   items dropped) and each name looked up after `lowercase()`: one unknown name, or no name at all, makes the
///   parse fail, and the builder keeps its default, `Feature.ALL`;
/// - `dataCollectionOptInEnabled` (deprecated) set to `true` (any case) turns the default `ALL` into `NONE`, but not
///   a value `enabledFeatures` set;
/// - `resetEnabledFeatures` is `true` only for `true` in any case.
package struct AirshipAndroidReading: Sendable, Hashable {
    /// Why the reading is not what the file appears to say, with where.
    package struct Note: Sendable, Hashable {
        package var line: Int?
        package var column: Int?
        package var keyPath: String
        package var message: String
    }

    /// Airship Android's `Feature.ALL`: the seven flags.
    package static let all = Feature.all
    /// Airship Android's config names (`AirshipConfigOptions.FEATURE_*`).
    package static let names: [String: Feature] = [
        "push": .push, "contacts": .contacts, "message_center": .messageCenter, "analytics": .analytics,
        "tags_and_attributes": .tagsAndAttributes, "in_app_automation": .inAppAutomation,
        "feature_flags": .featureFlags, "all": .all, "none": [],
    ]
    static let dataCollectionOptInKey = "dataCollectionOptInEnabled"

    /// The features enabled on a first launch (and after a reset).
    package var enabledFeatures: Feature
    /// Whether Airship Android resets the stored features to ``enabledFeatures`` at each launch.
    package var resetEnabledFeatures: Bool
    /// The fallbacks taken, in document order.
    package var notes: [Note]

    /// Reads a `.properties` file's bytes as Airship Android does.
    package init(bytes: [UInt8]) {
        do {
            self.init(entries: try PropertiesParser.parse(bytes))
        } catch {
            self.init(
                enabledFeatures: Self.all, resetEnabledFeatures: false,
                notes: [
                    Note(
                        line: error.line, column: error.column, keyPath: ConfigDiagnostic.rootKeyPath,
                        message: "java.util.Properties cannot load the file (\(error.message)); Airship Android "
                            + "then applies none of it and enables every feature")
                ])
        }
    }

    private init(enabledFeatures: Feature, resetEnabledFeatures: Bool, notes: [Note]) {
        self.enabledFeatures = enabledFeatures
        self.resetEnabledFeatures = resetEnabledFeatures
        self.notes = notes
    }

    /// Reads parsed entries as Airship Android does: the last value of a key counts, as in `java.util.Properties`.
    package init(entries: [PropertiesEntry]) {
        var values: [String: (entry: PropertiesEntry, text: String, start: Int)] = [:]
        for entry in entries {
            let (text, start) = PropertiesParser.trimmedAsAndroid(entry.value)
            values[entry.key] = text.isEmpty ? nil : (entry, text, start)
        }
        var features = Self.all
        var isDefault = true
        var notes: [Note] = []
        let key = ConfigValidator.enabledFeaturesKey
        if let (entry, text, start) = values[key] {
            if let mask = Int32(text), mask != -1 {
                features = Feature(rawValue: UInt(UInt32(bitPattern: mask))).intersection(Self.all)
                isDefault = false
            } else {
                let ranges = PropertiesParser.androidNameRanges(in: text)
                let scalars = Array(text.unicodeScalars)
                let items = ranges.map { range in
                    var view = String.UnicodeScalarView()
                    view.append(contentsOf: scalars[range])
                    return (name: String(view), range: range)
                }
                if let unknown = items.first(where: { Self.names[$0.name.lowercased()] == nil }) {
                    let place = entry.place(ofValueOffset: start + unknown.range.lowerBound)
                    notes.append(
                        Note(
                            line: place.line, column: place.column, keyPath: key,
                            message: "Airship Android does not know the name \(quoted(unknown.name)), ignores "
                                + "enabledFeatures and keeps its default: every feature"))
                } else if items.isEmpty {
                    let place = entry.place(ofValueOffset: start)
                    notes.append(
                        Note(
                            line: place.line, column: place.column, keyPath: key,
                            message: "Airship Android finds no name in \(quoted(text)), ignores enabledFeatures "
                                + "and keeps its default: every feature"))
                } else {
                    features = items.reduce(into: Feature()) { $0.formUnion(Self.names[$1.name.lowercased()] ?? []) }
                    isDefault = false
                }
            }
        }
        let optIn = values[Self.dataCollectionOptInKey].map { $0.text.lowercased() == "true" } ?? false
        if values[key] == nil, let entry = entries.last(where: { $0.key == key }) {
            notes.append(
                Note(
                    line: entry.place.line, column: entry.place.column, keyPath: key,
                    message: "Airship Android drops a key whose value is empty and keeps its default: every feature"))
        } else if values[key] == nil && !optIn {
            notes.append(
                Note(
                    line: nil, column: nil, keyPath: key,
                    message: "missing: Airship Android then keeps its default: every feature"))
        }
        if optIn, isDefault, let (entry, _, _) = values[Self.dataCollectionOptInKey] {
            features = []
            notes.append(
                Note(
                    line: entry.place.line, column: entry.place.column, keyPath: Self.dataCollectionOptInKey,
                    message: "dataCollectionOptInEnabled = true turns Airship Android's default (every feature) "
                        + "into none, since enabledFeatures sets nothing"))
        }
        self.init(
            enabledFeatures: features,
            resetEnabledFeatures: values[ConfigValidator.resetEnabledFeaturesKey]?.text.lowercased() == "true",
            notes: notes)
    }
}

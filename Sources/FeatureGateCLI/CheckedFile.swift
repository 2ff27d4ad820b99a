import FeatureGate
import FeatureGateConfig
import Foundation

/// One file's outcome under `check`: what it reports about the file in every format.
struct CheckedFile {
    /// The operand as given on the command line (or in a `--pair`).
    var path: String
    /// The name the file's diagnostics give it.
    var source: String
    var format: ConfigFormat?
    /// Errors and warnings in document order: FeatureGate's reading, then (with `--airship`) the Airship SDKs', then
    /// `--same-features`' findings.
    var diagnostics: [ConfigDiagnostic] = []
    /// Whether the file itself passes: no error from FeatureGate's reading nor, with `--airship`, from an Airship
    /// SDK's. A `--same-features` difference is about several files and leaves it as it is.
    var valid = false
    /// FeatureGate's reading, when it succeeded.
    var configuration: PrivacyConfiguration?
    /// What Airship Android reads, for a `.properties` file.
    var airshipAndroid: AirshipAndroidReading?
    /// With `--airship`: the platform that loads the file and what it enables, when that is one set of features (an
    /// iOS file that SDK 19 and later fail `takeOff` on has none).
    var platformReading: (sdk: String, features: Feature)?
    /// Where `enabledFeatures` is written (its value, else its key), when the file has lines and the key.
    var enabledFeaturesPlace: (line: Int, column: Int?)?

    /// The name a line of text output gives the file: the path, or `<stdin>` for `-`.
    var displayName: String { path == "-" ? "<stdin>" : UntrustedText.escapedPath(path) }

    /// The features `--same-features` compares: with `--airship` the platform's reading, otherwise FeatureGate's.
    func comparedFeatures(airship: Bool) -> Feature? {
        airship ? platformReading?.features : valid ? configuration?.enabledFeatures : nil
    }

    static let airshipIOS = "Airship iOS"
    static let airshipAndroidSDK = "Airship Android"

    /// Reads `path` (`-` for standard input) as `options` say and reports on it.
    static func check(_ path: String, with options: ReadingOptions) -> CheckedFile {
        let reader = options.reader
        let (loaded, file) = FeatureGateTool.loadDocumentAndFile(path, with: reader)
        var checked = CheckedFile(path: path, source: file?.source ?? (path == "-" ? "<stdin>" : path))
        var root: ConfigNode?
        switch loaded {
        case .success(let document):
            checked.format = document.result.format
            checked.diagnostics = document.result.warnings
            checked.configuration = document.result.configuration
            root = document.root
        case .failure(let error):
            checked.format = error.format
            checked.diagnostics = error.diagnostics
            // An invalid file may still parse: its tree places --same-features' findings and feeds Airship's readings.
            if let file { root = try? reader.parse(bytes: file.bytes, source: file.source).1 }
        }
        if let root { checked.enabledFeaturesPlace = enabledFeaturesPlace(in: root) }
        if checked.format == .properties, let file {
            checked.airshipAndroid = AirshipAndroidReading(bytes: file.bytes)
        }
        if options.airship {
            if checked.format == .properties {
                checked.addAirshipAndroidReading(file: file, catalog: reader.catalog, limits: reader.limits)
            } else if let root {
                checked.addAirshipIOSReading(root)
            }
        }
        checked.valid = !checked.diagnostics.contains { $0.severity == .error }
        checked.diagnostics = inDocumentOrder(checked.diagnostics)
        return checked
    }

    /// Where the top-level `enabledFeatures` is written.
    private static func enabledFeaturesPlace(in root: ConfigNode) -> (line: Int, column: Int?)? {
        guard case .dictionary(let entries) = root.value,
            let entry = entries.first(where: { $0.key == ConfigValidator.enabledFeaturesKey })
        else { return nil }
        if let line = entry.value.line { return (line, entry.value.column) }
        return entry.line.map { ($0, entry.column) }
    }

    /// Airship's iOS SDK's reading of a plist or JSON file: the values it rejects, and a missing `enabledFeatures`,
    /// each an error (SDK 19 and later fail `takeOff`, or every SDK enables every feature).
    private mutating func addAirshipIOSReading(_ root: ConfigNode) {
        guard case .dictionary(let entries) = root.value else { return }
        let airship = AirshipAcceptance.diagnostics(for: root, source: source)
        diagnostics += airship
        if !entries.contains(where: { $0.key == ConfigValidator.enabledFeaturesKey }) {
            platformReading = (Self.airshipIOS, Feature.all)
        } else if !airship.contains(where: { $0.severity == .error }), let configuration {
            // Airship reads only its own names, in an array: where it rejects nothing, it reads what FeatureGate reads.
            platformReading = (Self.airshipIOS, configuration.enabledFeatures)
        }
    }

    /// Airship Android's reading of a `.properties` file: where it falls back to its default, an error when that
    /// enables more than the file does as written (by FeatureGate's lenient reading), a warning otherwise.
    private mutating func addAirshipAndroidReading(
        file: (source: String, bytes: [UInt8])?, catalog: FeatureCatalog, limits: ConfigLimits
    ) {
        guard let reading = airshipAndroid, let file else { return }
        platformReading = (Self.airshipAndroidSDK, reading.enabledFeatures)
        let written =
            configuration?.enabledFeatures
            ?? (try? ConfigReader(mode: .lenient, catalog: catalog, limits: limits)
                .read(bytes: file.bytes, source: file.source).configuration.enabledFeatures) ?? []
        let wider = reading.enabledFeatures.subtracting(written)
        var widening = false
        for note in reading.notes {
            // dataCollectionOptInEnabled only ever takes away.
            let isError = !wider.isEmpty && note.keyPath == ConfigValidator.enabledFeaturesKey
            widening = widening || isError
            diagnostics.append(
                ConfigDiagnostic(
                    severity: isError ? .error : .warning, kind: .readDifferentlyByAirshipAndroid, source: source,
                    keyPath: note.keyPath, line: note.line, column: note.column, found: nil, expected: nil,
                    message: (note.line.map { "line \($0): " } ?? "") + note.message))
        }
        if !wider.isEmpty && !widening {
            let place = enabledFeaturesPlace
            let enabled = catalog.names(of: wider).joined(separator: ", ")
            diagnostics.append(
                ConfigDiagnostic(
                    severity: .error, kind: .readDifferentlyByAirshipAndroid, source: source,
                    keyPath: ConfigValidator.enabledFeaturesKey, line: place?.line, column: place?.column,
                    found: nil, expected: nil,
                    message: (place.map { "line \($0.line): " } ?? "") + "Airship Android (20.x) reads this file as "
                        + "enabling \(enabled), which the file does not enable as written"))
        }
    }

    /// Sorted by line where lines are known, keeping the order of diagnostics on the same line.
    static func inDocumentOrder(_ diagnostics: [ConfigDiagnostic]) -> [ConfigDiagnostic] {
        diagnostics.enumerated()
            .sorted { ($0.element.line ?? .max, $0.offset) < ($1.element.line ?? .max, $1.offset) }
            .map(\.element)
    }
}

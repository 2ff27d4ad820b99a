import FeatureGate
import FeatureGateConfig

/// `check --pair A=B`: two files that `--same-features` compares with each other.
struct FilePair: Equatable {
    var first: String
    var second: String

    /// Reads `A=B`, split at the first `=`.
    init(_ declaration: String) throws(UsageError) {
        let parts = declaration.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw UsageError(
                message: "--pair \(declaration): expected A=B, two files to compare, e.g. "
                    + "--pair ios/App/AirshipConfig.plist=android/app/src/main/assets/airshipconfig.properties")
        }
        first = String(parts[0])
        second = String(parts[1])
        guard Self.sameFile(first, second) == false else {
            throw UsageError(message: "--pair \(declaration): a file cannot be paired with itself")
        }
    }

    /// Whether two paths name the same file as written: `./a//b` is `a/b` (no symbolic link is followed).
    static func sameFile(_ one: String, _ other: String) -> Bool {
        normalized(one) == normalized(other)
    }

    private static func normalized(_ path: String) -> String {
        let components = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        return (path.hasPrefix("/") ? "/" : "") + components.joined(separator: "/")
    }
}

/// `check --same-features`: which files are compared with which, and what the comparisons find.
///
/// Without pairs, every file given is compared with every other. With pairs, each pair that a file given belongs to
/// is compared, its other file read from disk when it was not given: a pre-commit hook is given only the staged
/// files, and the file that did not change is still the other half of the decision.
struct SameFeatures {
    /// The files to check: those given, then the other files of their pairs that were not given.
    private(set) var files: [String]
    /// Each comparison: indices into ``files``.
    private(set) var groups: [[Int]] = []
    /// With pairs: the files given that belong to none, checked but not compared.
    private(set) var unpaired: [String] = []

    init(operands: [String], pairs: [FilePair]) {
        files = operands
        guard !pairs.isEmpty else {
            groups = [Array(operands.indices)]
            return
        }
        for pair in pairs {
            let given = { (path: String) in operands.contains { FilePair.sameFile($0, path) } }
            guard given(pair.first) || given(pair.second) else { continue }
            let group = [index(of: pair.first), index(of: pair.second)]
            if !groups.contains(group) { groups.append(group) }
        }
        unpaired = operands.filter { operand in
            !pairs.contains { FilePair.sameFile($0.first, operand) || FilePair.sameFile($0.second, operand) }
        }
    }

    /// The index of `path` in ``files``, adding it when it is not there.
    private mutating func index(of path: String) -> Int {
        if let index = files.firstIndex(where: { FilePair.sameFile($0, path) }) { return index }
        files.append(path)
        return files.count - 1
    }

    /// Compares each group of `checked` (read from ``files``, in order): a feature some files of a group enable and
    /// others do not is an error on each file's `enabledFeatures`. Returns the lines that say what was compared
    /// and passed, or could not be compared.
    func compare(_ checked: inout [CheckedFile], catalog: FeatureCatalog, airship: Bool) -> [String] {
        var notes: [String] = []
        for group in groups {
            let names = group.map { checked[$0].displayName }.joined(separator: ", ")
            let unread = group.filter { checked[$0].comparedFeatures(airship: airship) == nil }
            guard unread.isEmpty else {
                let which = unread.map { checked[$0].displayName }.joined(separator: ", ")
                notes.append("same features: not compared (\(names)): \(which) cannot be read as one set of features")
                continue
            }
            let readings = group.map { checked[$0].comparedFeatures(airship: airship) ?? [] }
            let union = readings.reduce(Feature()) { $0.union($1) }
            let common = readings.reduce(union) { $0.intersection($1) }
            if union == common {
                let enabled = union.isEmpty ? "none" : catalog.names(of: union).joined(separator: ", ")
                notes.append("same features: \(enabled) (\(names))")
                continue
            }
            for flag in union.subtracting(common).flags {
                let name = catalog.name(of: flag) ?? "bit\(flag.rawValue.trailingZeroBitCount)"
                let described = group.map { index in
                    let file = checked[index]
                    return file.displayName + (airship ? file.platformReading.map { " (\($0.sdk))" } ?? "" : "")
                }
                let enabling = group.indices.filter { readings[$0].contains(flag) }.map { described[$0] }
                let others = group.indices.filter { !readings[$0].contains(flag) }.map { described[$0] }
                let text =
                    "--same-features: \(name) is enabled by \(enabling.joined(separator: ", ")); not by "
                    + others.joined(separator: ", ")
                for (position, index) in group.enumerated() {
                    let file = checked[index]
                    let place = file.enabledFeaturesPlace
                    checked[index].diagnostics.append(
                        ConfigDiagnostic(
                            severity: .error, kind: .differentFeatures, source: file.source,
                            keyPath: ConfigValidator.enabledFeaturesKey, line: place?.line, column: place?.column,
                            found: readings[position].contains(flag) ? "\(name) enabled" : "\(name) not enabled",
                            expected: "the same features in every file compared",
                            message: (place.map { "line \($0.line): " } ?? "") + text))
                }
            }
        }
        for index in checked.indices {
            checked[index].diagnostics = CheckedFile.inDocumentOrder(checked[index].diagnostics)
        }
        for file in unpaired {
            notes.append("same features: \(UntrustedText.escapedPath(file)) is in no --pair; not compared")
        }
        return notes
    }
}

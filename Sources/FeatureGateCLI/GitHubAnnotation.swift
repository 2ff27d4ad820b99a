import FeatureGateConfig

/// `featuregate check --format github`: one GitHub Actions workflow command per diagnostic,
/// `::error file=PATH,line=L,col=C,title=featuregate check::MESSAGE` (`::warning` for a warning).
enum GitHubAnnotation {
    static let title = "featuregate check"

    /// The workflow command for `diagnostic` about `file` (the path as given on the command line). `line` and `col`
    /// are left out when unknown; the message is the key path and the problem, without the place.
    static func command(for diagnostic: ConfigDiagnostic, file: String) -> String {
        var properties = ["file=" + escapedProperty(file)]
        if let line = diagnostic.line {
            properties.append("line=\(line)")
            if let column = diagnostic.column { properties.append("col=\(column)") }
        }
        properties.append("title=" + escapedProperty(title))
        return "::\(diagnostic.severity.rawValue) " + properties.joined(separator: ",") + "::"
            + escapedMessage(diagnostic.placelessText)
    }

    /// A command's message, escaped as GitHub's runner reads it back: `%` → `%25`, CR → `%0D`, LF → `%0A`.
    static func escapedMessage(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "%": result += "%25"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A command's property value: the message escapes, and `:` → `%3A`, `,` → `%2C`.
    static func escapedProperty(_ text: String) -> String {
        var result = ""
        for scalar in escapedMessage(text).unicodeScalars {
            switch scalar {
            case ":": result += "%3A"
            case ",": result += "%2C"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

extension ConfigDiagnostic {
    /// The key path and the problem, without the place, for outputs that carry the place in fields of their own
    /// (GitHub annotations, SARIF): `enabledFeatures[1]: unknown feature name "pus"; did you mean "push"?`.
    var placelessText: String {
        keyPath == ConfigDiagnostic.rootKeyPath ? unplacedMessage : "\(keyPath): \(unplacedMessage)"
    }
}

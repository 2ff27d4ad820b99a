import FeatureGate
import Foundation

/// One step of a consent flow.
enum DemoStep: CustomStringConvertible {
    case enable(Feature, String)
    case disable(Feature, String)
    case track(Int)

    var description: String {
        switch self {
        case .enable(_, let name): "enable:\(name)"
        case .disable(_, let name): "disable:\(name)"
        case .track(let count): "track:\(count)"
        }
    }
}

/// The command line: `consent-demo [--config FILE] [--data-dir DIR] [--steps LIST]`.
struct DemoOptions {
    static let usage = """
        usage: consent-demo [--config FILE] [--data-dir DIR] [--steps LIST]

          --config FILE    JSON config, {"enabledFeatures": [...]} (default: Examples/Configs/default-off.json;
                           a missing file means every feature disabled)
          --data-dir DIR   where the SDK keeps its files (default: a new temporary directory, created only when
                           something is stored and removed at exit)
          --steps LIST     comma-separated steps, run in order: enable:FEATURE, disable:FEATURE, track:N;
                           FEATURE is a config name (push, analytics, message_center, contacts, ...) or all.
                           `none` starts, settles and exits. Without --steps: the scripted flow
                           enable:analytics,track:5,enable:push,disable:all.
        """

    static let scriptedFlow = "enable:analytics,track:5,enable:push,disable:all"

    var configPath = "Examples/Configs/default-off.json"
    var dataDirectory: URL?
    var steps: [DemoStep] = []

    init(arguments: [String]) throws {
        var stepList = Self.scriptedFlow
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            switch flag {
            case "--config", "--data-dir", "--steps":
                guard let value = remaining.popFirst() else { throw DemoError("\(flag) needs a value") }
                switch flag {
                case "--config": configPath = value
                case "--data-dir": dataDirectory = URL(filePath: value, directoryHint: .isDirectory)
                default: stepList = value
                }
            case "-h", "--help":
                throw DemoError("")
            default:
                throw DemoError("unknown argument \"\(flag)\"")
            }
        }
        steps = try Self.parseSteps(stepList)
    }

    static func parseSteps(_ list: String) throws -> [DemoStep] {
        if list == "none" { return [] }
        return try list.split(separator: ",", omittingEmptySubsequences: false).map { raw in
            let step = raw.trimmingCharacters(in: .whitespaces)
            if step == "revoke-all" {
                throw DemoError("step \"revoke-all\" is not available yet: it arrives with consent (issue 5)")
            }
            let parts = step.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2 else {
                throw DemoError("step \"\(step)\": expected enable:FEATURE, disable:FEATURE or track:N")
            }
            switch parts[0] {
            case "enable": return .enable(try feature(parts[1]), parts[1])
            case "disable": return .disable(try feature(parts[1]), parts[1])
            case "track":
                guard let count = Int(parts[1]), count >= 0 else {
                    throw DemoError("step \"\(step)\": expected a count of 0 or more after track:")
                }
                return .track(count)
            default:
                throw DemoError("step \"\(step)\": unknown action \"\(parts[0])\"; expected enable, disable or track")
            }
        }
    }

    private static func feature(_ name: String) throws -> Feature {
        if name == "all" { return FeatureCatalog.builtIn.allFeatures }
        guard let feature = FeatureCatalog.builtIn.feature(named: name) else {
            throw DemoError(
                "unknown feature \"\(name)\"; expected all or one of "
                    + FeatureCatalog.builtIn.entries.map(\.name).joined(separator: ", ")
            )
        }
        return feature
    }
}

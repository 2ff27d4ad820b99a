import FeatureGate
import Foundation

/// One step of a consent flow.
enum DemoStep: CustomStringConvertible {
    case enable(Feature, String)
    case disable(Feature, String)
    case track(Int)
    case trackPending(Int)
    case grant(ConsentCategory)
    case deny(ConsentCategory)
    case att(TrackingAuthorizationStatus)
    case cmp(String)
    case revokeAll
    /// The app comes to the foreground: the remote-data refresher fetches the server's kill switch now.
    case remote
    /// The demo's clock moves on by a number of days (answers age), then consent is refreshed.
    case advance(Int)
    /// The app learns where the user is.
    case region(ConsentRegion?)
    /// The app marks or unmarks the user as a child.
    case child(Bool)
    /// A Global Privacy Control signal turns on or off.
    case gpc(Bool)
    /// Prints what a privacy dashboard shows (ConsentSettings).
    case dashboard

    var description: String {
        switch self {
        case .enable(_, let name): "enable:\(name)"
        case .disable(_, let name): "disable:\(name)"
        case .track(let count): "track:\(count)"
        case .trackPending(let count): "track-pending:\(count)"
        case .grant(let category): "grant:\(category)"
        case .deny(let category): "deny:\(category)"
        case .att(let status): "att:\(status)"
        case .cmp(let path): "cmp:\(path)"
        case .revokeAll: "revoke-all"
        case .remote: "remote"
        case .advance(let days): "advance:\(days)"
        case .region(let region): "region:\(region?.code ?? "none")"
        case .child(let isChild): "child:\(isChild ? "on" : "off")"
        case .gpc(let isOn): "gpc:\(isOn ? "on" : "off")"
        case .dashboard: "dashboard"
        }
    }
}

/// The command line: `consent-demo [--config FILE] [--data-dir DIR] [--steps LIST]`.
struct DemoOptions {
    static let usage = """
        usage: consent-demo [--config FILE] [--data-dir DIR] [--steps LIST] [--slow-collector MS]
                            [--hold-undecided] [--region CODE] [--readme N]

          --config FILE    config file read by FeatureGateConfig (JSON or plist, strict: a typo is an error with
                           its line), default Examples/Configs/default-off.json; a missing file means every
                           feature disabled
          --data-dir DIR   where the SDK keeps its files (default: a new temporary directory, created only when
                           something is stored and removed at exit). FeatureGate's own files sit at the top:
                             featuregate-state.json   the gate's state        (kept by revoke-all)
                             consent-ledger.jsonl     the consent audit trail (kept by revoke-all)
                             anonymous-id             the anonymous identifier (deleted by revoke-all)
                           and each subsystem's files in a folder of its own (purged by revoke-all)
          --steps LIST     comma-separated steps, run in order:
                             grant:CATEGORY, deny:CATEGORY   consent (analytics, advertising, thirdPartySharing)
                             att:STATUS                      App Tracking Transparency reports STATUS
                                                             (notDetermined, restricted, denied, authorized)
                             cmp:FILE                        a consent platform's answer: FILE is a JSON
                                                             object of the IAB keys a CMP writes (e.g.
                                                             Examples/CMP/eu-analytics-only.json), applied
                                                             through FeatureGateIAB's CMPConsentSource
                             track:N                         N sample events, sanitized, then a flush
                             track-pending:N                 N sample events; the flush is left running
                                                             once its first upload reached the collector
                             enable:FEATURE, disable:FEATURE the app switches a feature directly (push,
                                                             analytics, message_center, contacts, ... or all)
                             revoke-all                      deny everything, purge, reset, request erasure
                             remote                          the refresher fetches the server's remote data
                                                             (only while a feature is on): the collector's
                                                             first answer disables push for this app version,
                                                             later ones lift it; prints reason(for: .push)
                             advance:DAYS                    the demo's clock moves DAYS days on; answers
                                                             whose lifetime ran out expire
                             region:CODE                     the app says where the user is (US, US-CA, FR;
                                                             none for unknown)
                             child:on, child:off             the app marks or unmarks the user as a child
                             gpc:on, gpc:off                 a Global Privacy Control signal
                             dashboard                       print what a privacy dashboard shows
                           `none` starts, settles and exits. Without --steps: the scripted flow
                           \(scriptedFlow).
          --slow-collector MS
                           the loopback collector holds each event upload MS milliseconds, then answers 503;
                           at exit the demo prints how many events it received after revoke-all began
          --hold-undecided analytics events tracked while analytics consent is undecided are held in memory
                           (never written, never sent) until it is granted (queued) or denied (dropped)
          --region CODE    where the user is at launch (default: unknown, so only the policy's default applies)
          --readme N       instead of the steps: the README's "Use it" wiring as written (PrivacyStack, a real
                           URLSessionTransport to https://api.example.com, an analytics buffer with its upload, a
                           push registration), started, then N events tracked and flushed; prints what each
                           track did. With every feature off it touches no file, directory or socket

        Lifetimes and regions: \(lifetimeFlow)
        """

    static let lifetimeFlow = """
        --config Examples/Configs/consent-policy.json --region US-CA \\
                           --steps grant:analytics,dashboard,advance:396,dashboard,region:FR,dashboard
        """

    static let scriptedFlow = "grant:analytics,enable:push,track:4,remote,remote,att:denied,revoke-all"

    var configPath = "Examples/Configs/default-off.json"
    var dataDirectory: URL?
    var steps: [DemoStep] = []
    var slowCollector: Duration?
    var holdUndecided = false
    var region: ConsentRegion?
    /// `--readme N`: the README's wiring, N events tracked.
    var readmeEvents: Int?

    init(arguments: [String]) throws {
        var stepList = Self.scriptedFlow
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            switch flag {
            case "--config", "--data-dir", "--steps", "--slow-collector", "--region", "--readme":
                guard let value = remaining.popFirst() else { throw DemoError("\(flag) needs a value") }
                switch flag {
                case "--config": configPath = value
                case "--data-dir": dataDirectory = URL(filePath: value, directoryHint: .isDirectory)
                case "--slow-collector":
                    guard let milliseconds = Int(value), milliseconds > 0 else {
                        throw DemoError("--slow-collector \(value): expected a number of milliseconds above 0")
                    }
                    slowCollector = .milliseconds(milliseconds)
                case "--region":
                    guard let region = ConsentRegion(value) else {
                        throw DemoError("--region \(value): expected a country (US) or a subdivision (US-CA)")
                    }
                    self.region = region
                case "--readme":
                    guard let count = Int(value), count >= 0 else {
                        throw DemoError("--readme \(value): expected a number of events")
                    }
                    readmeEvents = count
                default: stepList = value
                }
            case "--hold-undecided":
                holdUndecided = true
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
            if step == "revoke-all" { return .revokeAll }
            if step == "remote" { return .remote }
            if step == "dashboard" { return .dashboard }
            let parts = step.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2 else {
                throw DemoError(
                    "step \"\(step)\": expected grant:CATEGORY, deny:CATEGORY, att:STATUS, cmp:FILE, track:N, "
                        + "track-pending:N, enable:FEATURE, disable:FEATURE, advance:DAYS, region:CODE, child:on|off, "
                        + "gpc:on|off, dashboard, remote or revoke-all")
            }
            switch parts[0] {
            case "enable": return .enable(try feature(parts[1]), parts[1])
            case "disable": return .disable(try feature(parts[1]), parts[1])
            case "grant": return .grant(try category(parts[1]))
            case "deny": return .deny(try category(parts[1]))
            case "att":
                guard let status = TrackingAuthorizationStatus(rawValue: parts[1]) else {
                    throw DemoError(
                        "step \"\(step)\": unknown status \"\(parts[1])\"; expected one of "
                            + TrackingAuthorizationStatus.allCases.map(\.rawValue).joined(separator: ", "))
                }
                return .att(status)
            case "cmp": return .cmp(parts[1])
            case "advance":
                guard let days = Int(parts[1]), days >= 0 else {
                    throw DemoError("step \"\(step)\": expected a number of days, 0 or more, after advance:")
                }
                return .advance(days)
            case "region":
                if parts[1] == "none" { return .region(nil) }
                guard let region = ConsentRegion(parts[1]) else {
                    throw DemoError("step \"\(step)\": expected a country (US), a subdivision (US-CA) or none")
                }
                return .region(region)
            case "child", "gpc":
                guard parts[1] == "on" || parts[1] == "off" else {
                    throw DemoError("step \"\(step)\": expected on or off after \(parts[0]):")
                }
                return parts[0] == "child" ? .child(parts[1] == "on") : .gpc(parts[1] == "on")
            case "track", "track-pending":
                guard let count = Int(parts[1]), count >= 0 else {
                    throw DemoError("step \"\(step)\": expected a count of 0 or more after \(parts[0]):")
                }
                return parts[0] == "track" ? .track(count) : .trackPending(count)
            default:
                throw DemoError(
                    "step \"\(step)\": unknown action \"\(parts[0])\"; expected grant, deny, att, cmp, track, "
                        + "track-pending, enable, disable, advance, region, child, gpc, dashboard or revoke-all")
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

    private static func category(_ name: String) throws -> ConsentCategory {
        let categories = ConsentPolicy.default.categories
        guard let category = categories.first(where: { $0.rawValue == name }) else {
            throw DemoError(
                "unknown consent category \"\(name)\"; expected one of "
                    + categories.map(\.rawValue).joined(separator: ", "))
        }
        return category
    }
}

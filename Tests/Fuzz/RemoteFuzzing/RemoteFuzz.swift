import FeatureGate
import FeatureGateRemote
import Foundation

/// The remote-data parser's invariants, checked on every input; a broken one traps.
package enum RemoteFuzz {
    static let versions = [("17.2.0", "1.0.3"), ("99999999999999999999.1", "1.2 (45)")]

    /// Parses `data` for both platforms and several version pairs, and checks:
    /// - validity depends on the platform only, never on the versions (a malformed rule refuses the payload even
    ///   where it would not apply);
    /// - a valid result disables only built-in flags, names a rule for each, has a finite refresh interval of 0 or
    ///   more, and disables exactly the union of its names and applying rules;
    /// - the same input gives the same answer.
    ///
    /// `versionPairs` limits how many version pairs are tried (raw bytes rarely reach a rule: one is enough).
    package static func run(_ data: Data, versionPairs: Int = versions.count) {
        for platform in RemoteDataPlatform.allCases {
            var validity: Bool?
            for (index, (sdk, app)) in versions.prefix(versionPairs).enumerated() {
                let target = RemoteConfigTarget(platform: platform, sdkVersion: sdk, appVersion: app)
                let first = Result { () throws(RemotePayloadError) in try RemoteConfigParser.parse(data, for: target) }
                if index == 0 && platform == .ios {
                    let again = Result { () throws(RemotePayloadError) in
                        try RemoteConfigParser.parse(data, for: target)
                    }
                    check(first == again, "the same input parsed twice gave different answers")
                }
                let isValid = (try? first.get()) != nil
                check(validity == nil || validity == isValid, "validity changed with the versions (\(sdk), \(app))")
                validity = isValid
                switch first {
                case .success(let decision): checkDecision(decision)
                case .failure(let error): check(!error.expected.isEmpty, "an error without what was expected")
                }
            }
        }
    }

    private static func checkDecision(_ decision: RemoteConfigDecision) {
        let disables = decision.disables
        check(Feature.all.isSuperset(of: disables.features), "a flag outside the built-in seven was disabled")
        for flag in disables.features.flags { check(disables.rule(for: flag) != nil, "a disabled flag without a rule") }
        let expected = decision.names.reduce(into: Feature()) { $0.formUnion($1.features) }
            .union(decision.rules.filter(\.applies).reduce(into: Feature()) { $0.formUnion($1.features) })
        check(disables.features == expected, "the result is not the union of the names and applying rules")
        if let interval = disables.refreshInterval { check(interval.isFinite && interval >= 0, "a bad interval") }
    }

    private static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("remote-fuzzer: invariant broken: \(message())") }
    }
}

/// A payload the parser refuses: where, what was found, and what was expected.
///
/// A refused payload changes nothing: the remote layer that was kept stays.
package struct RemotePayloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The key path of the offending value, such as `payloads[0].timestamp` or
    /// `disable_features[1].sdk_versions[0]`; empty for the payload as a whole. Paths below `payloads` are in the
    /// merged app config.
    package let keyPath: String
    /// The payload of the response the merged key came from, such as `payloads[2] app_config:ios`; `nil` for a
    /// bare app config or a path outside the merged config.
    package let source: String?
    /// What was found, such as `a string "1.a"`.
    package let found: String
    /// What was expected there.
    package let expected: String

    /// Creates an error.
    package init(keyPath: String, source: String? = nil, found: String, expected: String) {
        self.keyPath = keyPath
        self.source = source
        self.found = found
        self.expected = expected
    }

    /// `KEYPATH (from SOURCE): found FOUND, expected EXPECTED`.
    package var description: String {
        let path = keyPath.isEmpty ? "(payload)" : keyPath
        let origin = source.map { " (from \($0))" } ?? ""
        return "\(path)\(origin): found \(found), expected \(expected)"
    }
}

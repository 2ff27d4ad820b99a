/// A key of a JSON object, for the hand-written `Codable` conformances of the package's files and records.
///
/// One key type for all of them: a `CodingKeys` enum per type (synthesized or written out) costs its own
/// `CodingKey`, `Hashable` and description conformances and metadata, about 2 KB of the binary each (issue 47).
/// Written as a string literal where a key is expected: `container.decode(UUID.self, forKey: "requestKey")`.
package struct JSONKey: CodingKey, ExpressibleByStringLiteral {
    /// The key's name.
    package let stringValue: String

    /// A JSON object's key has no integer form.
    package var intValue: Int? { nil }

    /// The key named `stringValue`.
    package init(stringLiteral stringValue: String) { self.stringValue = stringValue }

    /// The key named `stringValue`.
    package init?(stringValue: String) { self.stringValue = stringValue }

    /// A JSON object's key has no integer form: `nil`.
    package init?(intValue: Int) { nil }
}

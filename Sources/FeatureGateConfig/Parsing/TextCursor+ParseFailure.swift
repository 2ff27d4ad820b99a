import FeatureGate

// The format parsers' names for FeatureGate's parsing helpers, in every file of this module, also those that do not
// import FeatureGate.
package typealias KeyPathTracker = FeatureGate.KeyPathTracker
package typealias ParseBudget = NestingBudget

extension NestingBudget {
    /// The limits a config reader enforces.
    init(_ limits: ConfigLimits) {
        self.init(maximumDepth: limits.effectiveDepth, maximumValueCount: limits.maximumValueCount)
    }

    /// Counts one more value; fails once the document holds too many.
    mutating func countValue(line: Int?) throws(ParseFailure) {
        guard countValue() else {
            throw ParseFailure(
                .tooManyValues, line: line,
                "the document holds more than \(maximumValueCount) values",
                expected: "at most \(maximumValueCount) values")
        }
    }

    /// Fails when a container at `depth` (1 for the top level) is nested too deep.
    func checkDepth(_ depth: Int, line: Int?) throws(ParseFailure) {
        guard allows(depth: depth) else {
            throw ParseFailure(
                .nestingTooDeep, line: line,
                "containers are nested more than \(maximumDepth) levels deep",
                expected: "at most \(maximumDepth) levels of arrays and dictionaries")
        }
    }
}

extension TextCursor {
    /// A cursor over a config document, with the reader's limits.
    init(_ bytes: [UInt8], limits: ConfigLimits) {
        self.init(bytes, budget: NestingBudget(limits))
    }

    /// A syntax error at the cursor, naming the byte under it as what was found.
    func failure(_ message: String, expected: String? = nil) -> ParseFailure {
        ParseFailure(
            .syntaxError, line: line, column: column, message, found: describeByte(peek), expected: expected)
    }

    /// A key followed by no value (the cursor is on what came instead), placed at the key.
    func keyWithoutValue(_ key: String, line: Int, column: Int, expected: String) -> ParseFailure {
        .keyWithoutValue(key, path: path, line: line, column: column, found: describeByte(peek), expected: expected)
    }
}

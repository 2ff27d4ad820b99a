import FeatureGateRemote
import Testing

/// Airship's own Ivy matcher vectors (from the iOS and Android SDKs' matcher tests), then the forms this package
/// adds rules for.
@Suite struct IvyVersionConstraintTests {
    /// One constraint, the versions it must match and the versions it must not.
    struct Vector: Sendable, CustomTestStringConvertible {
        var constraint: String
        var matching: [String]
        var notMatching: [String]
        var testDescription: String { "\"\(constraint)\"" }
    }

    static let airshipVectors: [Vector] = [
        Vector(
            constraint: "[1.22.6.189,)", matching: ["1.22.6", "1.22.6.189", "1.22.6.188", "1.22.7"],
            notMatching: ["1.22.5"]),
        Vector(
            constraint: "[ 1.2 , 2.0 ]", matching: ["1.2", "1.2.0", "1.2.1", "2.0", "2.0.0"],
            notMatching: ["1.1", "1.1.0", "2.0.1", "2.1"]),
        Vector(
            constraint: "1.0",
            matching: [
                "1.0", " 1.0", "1.0 ", " 1.0 ", "1.0-SNAPSHOT", "1.0-alpha", "1.0-beta", "1.0-rc", "1.0-rc1",
            ],
            notMatching: [" 0.9", "1.1 ", " 2.0", " 2.0 ", "1.0.0"]),
        Vector(
            constraint: " 1.0", matching: ["1.0", " 1.0 ", "1.0-alpha ", " 1.0-beta"], notMatching: [" 0.9", "1.1 "]),
        Vector(constraint: "1.0   ", matching: ["1.0", " 1.0-rc01 "], notMatching: [" 2.0 "]),
        Vector(constraint: " 1.0 ", matching: ["1.0", " 1.0-SNAPSHOT"], notMatching: [" 0.9", " 2.0"]),
        Vector(constraint: "1", matching: ["1", "1-SNAPSHOT"], notMatching: ["1.0", "2"]),
        Vector(
            constraint: "1.0.+", matching: ["1.0.1", "1.0.5", "1.0.a", "1.0.0-SNAPSHOT"],
            notMatching: ["1", "1.0", "1.01", "1.11", "2", "1.0-SNAPSHOT", "1.1-beta"]),
        Vector(
            constraint: "1.0+", matching: ["1.0", "1.0-alpha", "1.0.1", "1.00", "1.01", "1.01-beta"],
            notMatching: ["1", "1.11", "2", "2-SNAPSHOT"]),
        Vector(constraint: " 1.0+  ", matching: ["1.0", "1.01-beta"], notMatching: ["1", "1.11", "2-SNAPSHOT"]),
        Vector(
            constraint: "1.0-rc1+", matching: ["1.0", "1.0-alpha", "1.0.1", "1.00", "1.01", "1.01-beta"],
            notMatching: ["1", "1.11", "2", "2-SNAPSHOT"]),
        Vector(
            constraint: "+",
            matching: ["1.0", "1.0.1", "1.00", "1.01", "1", "1.11", "2", "1.0-alpha", "2.2.2-beta", "2-SNAPSHOT"],
            notMatching: []),
        Vector(
            constraint: "[1.0, 2.0]",
            matching: ["1.0", "1.0.1", "1.5", "1.9.9", "2.0", "1.0-SNAPSHOT", "1.9.9-rc1", "2.0-beta"],
            notMatching: ["0.0", "0.9.9", "2.0.1", "3.0", "3.0-alpha"]),
        Vector(
            constraint: "[1.0 ,2.0[", matching: ["1.0", "1.0.1", "1.5", "1.9.9", "1.0-SNAPSHOT", "1.9.9-rc1"],
            notMatching: ["0.0", "0.9.9", "2.0", "2.0.1", "3.0", "2.0-beta", "3.0-alpha"]),
        Vector(
            constraint: "]1.0 , 2.0]", matching: ["1.0.1", "1.5", "1.9.9", "2.0", "1.0.1-beta", "2.0-beta"],
            notMatching: ["0.0", "0.9.9", "1.0", "2.0.1", "3.0", "1.0-SNAPSHOT"]),
        Vector(
            constraint: "] 1.0,2.0[", matching: ["1.0.1", "1.5", "1.9.9", "1.0.1-beta"],
            notMatching: ["0.0", "0.9.9", "1.0", "2.0", "2.0.1", "3.0", "2.0-beta", "3.0-SNAPSHOT"]),
        Vector(
            constraint: "[1.0, )",
            matching: ["1.0", "1.0.1", "1.5", "1.9.9", "2.0", "2.0.1", "3.0", "999.999.999", "3.0-SNAPSHOT"],
            notMatching: ["0.0", "0.9.9", "0.1-rc3"]),
        Vector(
            constraint: "]1.0,) ",
            matching: ["1.0.1", "1.5", "1.9.9", "2.0", "2.0.1", "3.0", "999.999.999", "2.0-alpha01"],
            notMatching: ["0.0", "0.9.9", "1.0", "1.0-alpha01"]),
        Vector(
            constraint: " (,2.0]", matching: ["0.0", "0.9.9", "1.0", "1.0.1", "1.5", "1.9.9", "2.0", "2.0-beta3"],
            notMatching: ["2.0.1", "3.0", "999.999.999", "3.0-alpha01"]),
        Vector(
            constraint: " ( , 2.0 [ ", matching: ["0.0", "0.9.9", "1.0", "1.0.1", "1.5", "1.9.9", "1.1-rc1"],
            notMatching: ["2.0", "2.0.1", "3.0", "999.999.999", "3.0-beta33"]),
        Vector(
            constraint: "1.0-beta",
            matching: [
                "1.0-SNAPSHOT", "1.0-alpha", "1.0-alpha01", "1.0-beta", "1.0-beta01", "1.0-rc", "1.0-rc1", "1.0",
            ],
            notMatching: ["1.0.0-SNAPSHOT", "1.0.0-alpha", "1.0.0-beta", "1.0.0-rc1", "1.0.0"]),
        Vector(
            constraint: "[1.0-alpha, 2.0-alpha01]",
            matching: ["1.0", "1.0-SNAPSHOT", "1.0.1", "1.5", "1.9.9", "1.9.9-rc1", "2.0-beta", "2.0"],
            notMatching: ["0.0", "0.9.9", "2.0.1", "3.0", "3.0-alpha"]),
        Vector(
            constraint: "]17.0.0-beta,)",
            matching: [
                "17.0.1", "17.0.1-SNAPSHOT", "17.0.1-alpha", "17.0.1-rc", "18.0.0", "18.0.0-beta", "999.999.999-rc",
            ],
            notMatching: ["17.0.0", "17.0.0-SNAPSHOT", "17.0.0-alpha", "17.0.0-beta", "17.0.0-rc"]),
    ]

    @Test(arguments: airshipVectors)
    func airshipVectorsMatchAsAirshipsTestsSay(_ vector: Vector) throws {
        let constraint = try IvyVersionConstraint(vector.constraint)
        for version in vector.matching {
            #expect(constraint.matches(version), "\"\(vector.constraint)\" should match \"\(version)\"")
        }
        for version in vector.notMatching {
            #expect(!constraint.matches(version), "\"\(vector.constraint)\" should not match \"\(version)\"")
        }
    }

    @Test(arguments: [
        "[1.22.6.189,)", "[1.22.6.189,2.2.3.4]", "[1.22.6.189, 2.2.3.4]", "[1.22.6.189-junk, 2.2.3.4-junk]",
        "1.2.3.4", "1.2.3.4.+", "1.2.3-junk", "1.+", "1.0 2",
    ])
    func airshipsValidConstraintsParse(_ text: String) {
        #expect(throws: Never.self) { try IvyVersionConstraint(text) }
    }

    @Test(arguments: [
        "", "   ", "1.a", "a", "1..0", ".1", "1.0-", "[,2.0]", "[1.0,]", "[1.0,2.0,3.0]", "(1.0,2.0]", "[1.0,2.0)",
        "(,)", "[1.0,2.0]x", "x[1.0,2.0]", "[1.0", "1.0]", "[]", "a+", "1.a+", "+1", "[1.a,2.0]", "1.", "1.0.-",
    ])
    func malformedConstraintsAreRefused(_ text: String) {
        #expect(throws: IvyConstraintError.self) { try IvyVersionConstraint(text) }
    }

    @Test func rangesCompareNumbersOfAnyLengthWithoutOverflow() throws {
        let constraint = try IvyVersionConstraint("[99999999999999999999999.0,)")
        #expect(constraint.matches("100000000000000000000000"))
        #expect(!constraint.matches("99999999999999999999998.9"))
        #expect(try IvyVersionConstraint("[1.02,1.2]").matches("1.002"))
    }

    @Test func aVersionARangeCannotReadIsInNoRange() throws {
        let constraint = try IvyVersionConstraint("[1.0,)")
        #expect(!constraint.matches("1.2 (45)"))
        #expect(!constraint.matches("1.0.a"))
        #expect(!constraint.matches(""))
    }

    @Test func anEmptyRangeMatchesNothing() throws {
        let constraint = try IvyVersionConstraint("[2.0,1.0]")
        for version in ["0.5", "1.0", "1.5", "2.0", "3.0"] { #expect(!constraint.matches(version)) }
    }
}

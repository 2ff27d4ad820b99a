extension TCString {
    /// Why a TC string could not be decoded: which segment, which field, at which bit, what was found and expected.
    ///
    /// A string that fails to decode grants nothing: whatever reads it treats every purpose and vendor as not
    /// consented to.
    public struct DecodingError: Error, Sendable, Hashable, CustomStringConvertible {
        /// A part of a TC string.
        public enum Segment: String, Sendable, Hashable, CaseIterable {
            /// The string as a whole (it is empty, or a segment between dots is).
            case string
            /// The core segment: the first one, always present.
            case core
            /// The disclosed-vendors segment (segment type 1).
            case disclosedVendors
            /// The allowed-vendors segment (segment type 2).
            case allowedVendors
            /// The publisher-TC segment (segment type 3), with custom purposes.
            case publisherTC
        }

        /// What went wrong.
        public enum Kind: String, Sendable, Hashable {
            /// The segment ended before the field did.
            case truncated
            /// A character that base64url does not allow, or padding in the wrong place.
            case invalidCharacter
            /// A TCF version other than 2 (a TCF v1 string, say).
            case unsupportedVersion
            /// A field holds a value the specification does not allow.
            case invalidValue
            /// A segment type that is not 1, 2 or 3, or one given twice; or a segment the string must have and
            /// lacks (the disclosed-vendors segment, required by TCF v2.3 in strings created from 1 March 2026).
            case invalidSegment
            /// The string, or a segment of it, is empty.
            case empty
        }

        /// What went wrong.
        public var kind: Kind
        /// The segment that could not be read.
        public var segment: Segment
        /// The index of that segment among the string's dot-separated segments (0 is the core).
        public var segmentIndex: Int
        /// The field, named as in the IAB specification (e.g. `Version`, `VendorConsents.MaxVendorId`).
        public var field: String
        /// The bit offset of the field from the start of its segment.
        public var bitOffset: Int
        /// What was found there.
        public var found: String
        /// What the specification expects there.
        public var expected: String

        /// Creates an error.
        public init(
            kind: Kind, segment: Segment, segmentIndex: Int, field: String, bitOffset: Int, found: String,
            expected: String
        ) {
            self.kind = kind
            self.segment = segment
            self.segmentIndex = segmentIndex
            self.field = field
            self.bitOffset = bitOffset
            self.found = found
            self.expected = expected
        }

        /// One line: `TC string <segment> segment N, <field> at bit B: found X, expected Y`.
        public var description: String {
            "TC string \(segment.rawValue) segment \(segmentIndex), \(field) at bit \(bitOffset): "
                + "found \(found), expected \(expected)"
        }
    }
}

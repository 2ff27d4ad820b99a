import Foundation

/// The JSON Lines encoding every ledger shares: one object per line, keys sorted, times in ISO 8601 with
/// milliseconds, and a format version `"v": 1` in each line.
package enum ConsentRecordLine {
    static let version = 1

    private struct Line: Codable {
        var v: Int
        var category: ConsentCategory
        var previousStatus: ConsentStatus
        var newStatus: ConsentStatus
        var time: String
        var policyVersion: Int
        var source: ConsentSource

        init(
            v: Int, category: ConsentCategory, previousStatus: ConsentStatus, newStatus: ConsentStatus, time: String,
            policyVersion: Int, source: ConsentSource
        ) {
            self.v = v
            self.category = category
            self.previousStatus = previousStatus
            self.newStatus = newStatus
            self.time = time
            self.policyVersion = policyVersion
            self.source = source
        }

        // Written out with the shared ``JSONKey``, as a synthesized conformance would: every field required.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: JSONKey.self)
            v = try container.decode(Int.self, forKey: "v")
            category = try container.decode(ConsentCategory.self, forKey: "category")
            previousStatus = try container.decode(ConsentStatus.self, forKey: "previousStatus")
            newStatus = try container.decode(ConsentStatus.self, forKey: "newStatus")
            time = try container.decode(String.self, forKey: "time")
            policyVersion = try container.decode(Int.self, forKey: "policyVersion")
            source = try container.decode(ConsentSource.self, forKey: "source")
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: JSONKey.self)
            try container.encode(v, forKey: "v")
            try container.encode(category, forKey: "category")
            try container.encode(previousStatus, forKey: "previousStatus")
            try container.encode(newStatus, forKey: "newStatus")
            try container.encode(time, forKey: "time")
            try container.encode(policyVersion, forKey: "policyVersion")
            try container.encode(source, forKey: "source")
        }
    }

    private static let timeStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    static func encode(_ record: ConsentRecord) -> Data {
        let line = Line(
            v: version,
            category: record.category,
            previousStatus: record.previousStatus,
            newStatus: record.newStatus,
            time: record.time.formatted(timeStyle),
            policyVersion: record.policyVersion,
            source: record.source
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of strings and integers cannot fail.
        return (try? encoder.encode(line)).map { $0 + Data("\n".utf8) } ?? Data()
    }

    package static func decode(_ line: Data) -> ConsentRecord? {
        guard let decoded = try? JSONDecoder().decode(Line.self, from: line), decoded.v == version,
            let time = try? Date(decoded.time, strategy: timeStyle)
        else { return nil }
        return ConsentRecord(
            category: decoded.category,
            previousStatus: decoded.previousStatus,
            newStatus: decoded.newStatus,
            time: time,
            policyVersion: decoded.policyVersion,
            source: decoded.source
        )
    }

    /// Splits JSON Lines into their non-empty lines. A last line without its newline that an append did not finish
    /// (cut short by a crash, or still being written) is left out.
    static func lines(of data: Data) -> [Data] {
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).map { Data($0) }
        if let last = data.last, last != UInt8(ascii: "\n"), let tail = lines.last, isCutShort(tail) {
            lines.removeLast()
        }
        return lines
    }

    /// Whether `line`, a last line without its newline, is the start of a line an append did not finish: short
    /// enough to be a record, and not JSON (no proper start of a JSON object is one). Anything else is an entry,
    /// kept whether or not it decodes (a newer version's record, say).
    static func isCutShort(_ line: Data) -> Bool {
        line.count <= FileConsentLedger.maximumLineLength && (try? JSONSerialization.jsonObject(with: line)) == nil
    }

    static func contents(of data: Data) -> ConsentLedgerContents {
        var reader = Reader()
        data.withUnsafeBytes { reader.read($0) }
        return reader.finish()
    }

    /// Decodes JSON Lines fed in pieces of any size, holding at most one line of ``FileConsentLedger/maximumLineLength``
    /// bytes besides the records: a ledger of any size is read in bounded memory.
    struct Reader {
        private var records: [ConsentRecord] = []
        private var unreadable = 0
        private var line = Data()
        /// The current line is longer than any record: its bytes are dropped, and it counts as unreadable.
        private var isOverlong = false
        /// How many bytes were read, and where the current line starts.
        private var consumed = 0
        private var lineStart = 0
        /// How many of the bytes read hold the entries read: all of them, but a last line ``finish()`` ignored.
        /// Set by ``finish()``.
        private(set) var entriesLength = 0
        /// How many bytes were read.
        var bytesRead: Int { consumed }

        mutating func read(_ bytes: UnsafeRawBufferPointer) {
            var start = 0
            while start < bytes.count {
                let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n"))
                let end = newline ?? bytes.count
                if !isOverlong {
                    if line.count + end - start > FileConsentLedger.maximumLineLength {
                        isOverlong = true
                        line = Data()
                    } else {
                        line.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                    }
                }
                guard newline != nil else { break }
                endLine()
                start = end + 1
                lineStart = consumed + start
            }
            consumed += bytes.count
        }

        private mutating func endLine() {
            if isOverlong {
                // A line longer than any record is not decoded: it counts as unreadable, which fails closed.
                unreadable += 1
            } else if !line.isEmpty {
                if let record = ConsentRecordLine.decode(line) { records.append(record) } else { unreadable += 1 }
            }
            line = Data()
            isOverlong = false
        }

        /// The records read. A last line without its newline that is the start of a line is ignored (see
        /// ``ConsentRecordLine/isCutShort(_:)``).
        mutating func finish() -> ConsentLedgerContents {
            entriesLength = consumed
            // The usual end: the last line had its newline. Nothing is left to decode.
            if line.isEmpty && !isOverlong {
                return ConsentLedgerContents(records: records, unreadableEntries: unreadable)
            }
            if let record = ConsentRecordLine.decode(line), !isOverlong {
                records.append(record)
            } else if isOverlong || !ConsentRecordLine.isCutShort(line) {
                unreadable += 1
            } else {
                entriesLength = lineStart
            }
            return ConsentLedgerContents(records: records, unreadableEntries: unreadable)
        }
    }
}

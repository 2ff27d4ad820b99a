/// Checks the `timestamp` of a remote-data payload: an ISO-8601 date and time, as Airship's servers write it.
///
/// Accepted: `YYYY-MM-DD`, then `T` (or a space) and `hh:mm`, optionally `:ss` and a fraction, then optionally
/// `Z` or an offset `±hh:mm` / `±hhmm` (Airship's servers send `2018-09-20T18:29:35.523` with no zone).
enum ISO8601Timestamp {
    static func isValid(_ text: String) -> Bool {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.digits(4), year >= 1, scanner.take("-"), let month = scanner.digits(2),
            (1...12).contains(month), scanner.take("-"), let day = scanner.digits(2), (1...31).contains(day)
        else { return false }
        if scanner.atEnd { return true }
        guard scanner.take("T") || scanner.take(" "), let hour = scanner.digits(2), hour <= 23, scanner.take(":"),
            let minute = scanner.digits(2), minute <= 59
        else { return false }
        if scanner.take(":") {
            guard let second = scanner.digits(2), second <= 60 else { return false }
            if scanner.take(".") || scanner.take(",") {
                guard scanner.digitRun() > 0 else { return false }
            }
        }
        if scanner.take("Z") { return scanner.atEnd }
        if scanner.take("+") || scanner.take("-") {
            guard let offsetHours = scanner.digits(2), offsetHours <= 23 else { return false }
            _ = scanner.take(":")
            guard let offsetMinutes = scanner.digits(2), offsetMinutes <= 59 else { return false }
        }
        return scanner.atEnd
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(character.value) else { return false }
            index += 1
            return true
        }

        mutating func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        mutating func digitRun() -> Int {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - start
        }
    }
}

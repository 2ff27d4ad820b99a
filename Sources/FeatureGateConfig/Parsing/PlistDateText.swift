/// How a plist date reads in a message, computed without Foundation so that no bit pattern can trap.
///
/// A binary plist stores a date as any 8-byte `Double` of seconds since 2001-01-01T00:00:00Z, and the file decides
/// which: NaN, infinity and ±1e308 are all on the table. `Date`'s description traps on NaN on Linux and gives up
/// on far dates, so dates are formatted here with integer arithmetic, and only after the range is checked.
package enum PlistDateText {
    /// Seconds from 2001-01-01 back to 0001-01-01T00:00:00Z.
    package static let earliest: Double = -63_113_904_000
    /// Seconds from 2001-01-01 to 10000-01-01T00:00:00Z, the first instant a four-digit year cannot show.
    package static let end: Double = 252_423_993_600

    /// `2024-05-01T12:00:00Z` (fractions of a second dropped) for years 1 to 9999; otherwise the raw number, as in
    /// `nan seconds after 2001-01-01T00:00:00Z`.
    package static func text(secondsSinceReferenceDate seconds: Double) -> String {
        // NaN fails both comparisons, so it takes the second branch with the infinities.
        guard seconds >= earliest, seconds < end else {
            return "\(seconds) seconds after 2001-01-01T00:00:00Z"
        }
        // In range, so the conversion is exact and cannot trap; 978_307_200 s is 1970-01-01 to 2001-01-01.
        let unix = Int64(seconds.rounded(.down)) + 978_307_200
        let days = unix >= 0 ? unix / 86_400 : (unix - 86_399) / 86_400
        let secondOfDay = unix - days * 86_400
        let (year, month, day) = civilDate(daysSince1970: days)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(secondOfDay / 3_600, 2) + ":"
            + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2) + "Z"
    }

    /// The seconds since 2001-01-01T00:00:00Z of `YYYY-MM-DDTHH:MM:SSZ` (years 1 to 9999), or `nil` for any other
    /// text or an impossible date.
    package static func seconds(fromISO text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54, bytes[13] == 0x3A,
            bytes[16] == 0x3A, bytes[19] == 0x5A
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            year >= 1, (1...12).contains(month), hour < 24, minute < 60, second < 60
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays: [Int64] = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day >= 1, day <= monthDays[Int(month - 1)] else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        return Double(days * 86_400 + hour * 3_600 + minute * 60 + second - 978_307_200)
    }

    /// The day count from 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day count from 1970-01-01 (Howard Hinnant's `civil_from_days`).
    private static func civilDate(daysSince1970 days: Int64) -> (Int64, Int64, Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

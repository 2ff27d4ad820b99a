/// Case folding, trimming and "did you mean" for feature names and keys.
package enum NameMatching {
    /// Trims ASCII whitespace and lowercases ASCII letters. Other characters are left alone, so a look-alike
    /// letter from another script never matches a flag.
    package static func normalize(_ raw: String) -> String {
        // Every name in a well-formed config is already trimmed lowercase ASCII: return it as is, without building
        // a string scalar by scalar.
        let utf8 = raw.utf8
        if let first = utf8.first, let last = utf8.last, !isASCIISpace(first), !isASCIISpace(last),
            utf8.allSatisfy({ $0 < 0x80 && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) })
        {
            return raw
        }
        let scalars = raw.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !isSpace($0) })!
        var result = String.UnicodeScalarView()
        for scalar in scalars[first...last] {
            if ("A"..."Z").contains(scalar) {
                result.append(Unicode.Scalar(scalar.value + 32)!)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" || scalar == "\u{0B}" || scalar == "\u{0C}"
    }

    /// ``isSpace(_:)`` for one byte of UTF-8: the same six characters.
    private static func isASCIISpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    /// The candidate closest to `name`, when it is close enough to be a likely typo.
    ///
    /// Compares both the names as written and with `_`, `-` and spaces removed, so `inAppAutomation` and
    /// `in-app-automation` find `in_app_automation`. Names longer than 64 characters get no suggestion, which
    /// keeps the cost of a hostile file bounded.
    package static func closest(to name: String, among candidates: [String]) -> String? {
        let lowered = normalize(name)
        guard lowered.unicodeScalars.count <= 64, !lowered.isEmpty else { return nil }
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = min(
                editDistance(lowered, candidate),
                editDistance(squashed(lowered), squashed(candidate)))
            let allowed = candidate.count <= 4 ? 1 : candidate.count <= 8 ? 2 : 3
            if distance <= allowed, distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// Whether `key` looks like a misspelling of `target`: the same letters in another case or with separators,
    /// or at most two edits away.
    package static func isNearMiss(_ key: String, of target: String) -> Bool {
        guard key != target else { return false }
        // The validator asks this of every top-level key, twice, so a whole AirshipConfig.plist costs 28 calls:
        // ASCII text (every key in practice) is compared without building strings.
        if let nearMiss = asciiNearMiss(key, of: target) { return nearMiss }
        guard key.unicodeScalars.count <= 64 else { return false }
        return scalarNearMiss(key, of: target)
    }

    /// ``isNearMiss(_:of:)`` for any text, by building the folded strings. `key` has at most 64 scalars.
    package static func scalarNearMiss(_ key: String, of target: String) -> Bool {
        let folded = squashed(normalize(key))
        let wanted = squashed(normalize(target))
        if folded == wanted { return true }
        guard abs(folded.unicodeScalars.count - wanted.unicodeScalars.count) <= 2 else { return false }
        return editDistance(folded, wanted) <= 2
    }

    /// ``isNearMiss(_:of:)`` without allocating, for ASCII text; `nil` when `key` or `target` is not ASCII.
    ///
    /// For ASCII, folding (trim, lowercase, drop `_`, `-` and spaces) works byte by byte, scalars are bytes (so a key
    /// of more than 64 bytes has more than 64 scalars), and two strings are equal exactly when their bytes are: the
    /// answer is the one ``scalarNearMiss(_:of:)`` gives.
    package static func asciiNearMiss(_ key: String, of target: String) -> Bool? {
        var key = key
        var target = target
        return key.withUTF8 { key in
            target.withUTF8 { target -> Bool? in
                guard key.allSatisfy({ $0 < 0x80 }), target.allSatisfy({ $0 < 0x80 }) else { return nil }
                guard key.count <= 64 else { return false }
                return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: key.count + target.count) { buffer in
                    let keyCount = foldASCII(key, into: buffer, at: 0)
                    let targetCount = foldASCII(target, into: buffer, at: keyCount)
                    let folded = UnsafeBufferPointer(rebasing: buffer[0..<keyCount])
                    let wanted = UnsafeBufferPointer(rebasing: buffer[keyCount..<keyCount + targetCount])
                    if folded.elementsEqual(wanted) { return true }
                    guard abs(folded.count - wanted.count) <= 2 else { return false }
                    return editDistance(folded, wanted, stoppingAbove: 2) <= 2
                }
            }
        }
    }

    /// Writes ASCII `text` trimmed, lowercased and without `_`, `-` and spaces into `buffer` from `start`; returns how
    /// many bytes it wrote.
    private static func foldASCII(
        _ text: UnsafeBufferPointer<UInt8>, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int
    ) -> Int {
        var first = 0
        var end = text.count
        while first < end, isASCIISpace(text[first]) { first += 1 }
        while end > first, isASCIISpace(text[end - 1]) { end -= 1 }
        var count = 0
        for byte in text[first..<end] where byte != UInt8(ascii: "_") && byte != UInt8(ascii: "-") && byte != 0x20 {
            buffer[start + count] = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
            count += 1
        }
        return count
    }

    private static func squashed(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != "_" && $0 != "-" && $0 != " " }))
    }

    /// Levenshtein distance over Unicode scalars.
    package static func editDistance(_ a: String, _ b: String) -> Int {
        editDistance(Array(a.unicodeScalars), Array(b.unicodeScalars))
    }

    /// Levenshtein distance between two sequences, computed row by row in two rows that live on the stack when small.
    ///
    /// With a `limit`, it stops as soon as every entry of a row exceeds it (later rows can only be larger) and returns
    /// that row's smallest entry: the exact distance when it is at most `limit`, some value above `limit` otherwise.
    private static func editDistance<Text: RandomAccessCollection>(
        _ a: Text, _ b: Text, stoppingAbove limit: Int = .max
    ) -> Int where Text.Element: Equatable, Text.Index == Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * (b.count + 1)) { rows in
            var previous = UnsafeMutableBufferPointer(rebasing: rows[0...b.count])
            var current = UnsafeMutableBufferPointer(rebasing: rows[(b.count + 1)...])
            for j in 0...b.count { previous[j] = j }
            for i in 1...a.count {
                current[0] = i
                var rowMinimum = i
                for j in 1...b.count {
                    let substitution =
                        previous[j - 1] + (a[a.startIndex + i - 1] == b[b.startIndex + j - 1] ? 0 : 1)
                    current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
                    rowMinimum = min(rowMinimum, current[j])
                }
                if rowMinimum > limit { return rowMinimum }
                swap(&previous, &current)
            }
            return previous[b.count]
        }
    }
}

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
    ///
    /// To check many keys against one target, make a ``NearMissTarget`` once.
    package static func isNearMiss(_ key: String, of target: String) -> Bool {
        NearMissTarget(target).isNearMiss(key)
    }

    /// ``isNearMiss(_:of:)`` for any text, by building the folded strings. `key` has at most 64 scalars.
    package static func scalarNearMiss(_ key: String, of target: String) -> Bool {
        let folded = squashed(normalize(key))
        let wanted = squashed(normalize(target))
        if folded == wanted { return true }
        guard abs(folded.unicodeScalars.count - wanted.unicodeScalars.count) <= 2 else { return false }
        return editDistance(folded, wanted) <= 2
    }

    /// ASCII `text` trimmed, lowercased and without `_`, `-` and spaces, written to the start of `buffer`; returns
    /// how many bytes it wrote (at most `text.count`).
    fileprivate static func foldASCII(
        _ text: UnsafeBufferPointer<UInt8>, into buffer: UnsafeMutableBufferPointer<UInt8>
    ) -> Int {
        var first = 0
        var end = text.count
        while first < end, isASCIISpace(text[first]) { first += 1 }
        while end > first, isASCIISpace(text[end - 1]) { end -= 1 }
        var count = 0
        for byte in text[first..<end] where byte != UInt8(ascii: "_") && byte != UInt8(ascii: "-") && byte != 0x20 {
            buffer[count] = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
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
    fileprivate static func editDistance<Text: RandomAccessCollection>(
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

/// A name that keys may be near misses of, such as `enabledFeatures`, folded once so that each key checked against it
/// costs one pass over the key and no allocation.
///
/// The validator checks every top-level key of a config against both keys it reads: 28 checks for a whole
/// `AirshipConfig.plist`, which made them most of the cost of reading one while they built strings scalar by scalar.
package struct NearMissTarget: Sendable {
    /// The name as written.
    package let name: String
    /// The folded name when it is ASCII; `nil` sends every key to ``NameMatching/scalarNearMiss(_:of:)``.
    private let folded: [UInt8]?

    /// Folds `name` for checking keys against it.
    package init(_ name: String) {
        self.name = name
        let bytes = Array(name.utf8)
        guard bytes.allSatisfy({ $0 < 0x80 }) else {
            folded = nil
            return
        }
        folded = bytes.withUnsafeBufferPointer { bytes in
            [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
                count = NameMatching.foldASCII(bytes, into: buffer)
            }
        }
    }

    /// Whether `key` looks like a misspelling of ``name``; the answer of ``NameMatching/isNearMiss(_:of:)``.
    package func isNearMiss(_ key: String) -> Bool {
        guard key != name else { return false }
        if let answer = asciiNearMiss(key) { return answer }
        guard key.unicodeScalars.count <= 64 else { return false }
        return NameMatching.scalarNearMiss(key, of: name)
    }

    /// The answer for an ASCII key and name, or `nil` when either is not ASCII.
    ///
    /// For ASCII, folding works byte by byte, scalars are bytes (so a key of more than 64 bytes has more than 64
    /// scalars), and two strings are equal exactly when their bytes are: the answer is the one
    /// ``NameMatching/scalarNearMiss(_:of:)`` gives.
    package func asciiNearMiss(_ key: String) -> Bool? {
        guard let folded else { return nil }
        var key = key
        return key.withUTF8 { key -> Bool? in
            guard key.allSatisfy({ $0 < 0x80 }) else { return nil }
            // Folding never lengthens a key, so one too short for two edits to reach the name is not a near miss.
            guard key.count <= 64, key.count >= folded.count - 2 else { return false }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: key.count) { buffer in
                let foldedKey = UnsafeBufferPointer(rebasing: buffer[0..<NameMatching.foldASCII(key, into: buffer)])
                return folded.withUnsafeBufferPointer { folded in
                    if foldedKey.elementsEqual(folded) { return true }
                    guard abs(foldedKey.count - folded.count) <= 2 else { return false }
                    return NameMatching.editDistance(foldedKey, folded, stoppingAbove: 2) <= 2
                }
            }
        }
    }
}

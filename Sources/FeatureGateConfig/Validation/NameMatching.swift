/// Case folding, trimming and "did you mean" for feature names and keys.
package enum NameMatching {
    /// Trims ASCII whitespace and lowercases ASCII letters. Other characters are left alone, so a look-alike
    /// letter from another script never matches a flag.
    package static func normalize(_ raw: String) -> String {
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
        guard key != target, key.unicodeScalars.count <= 64 else { return false }
        let folded = squashed(normalize(key))
        let wanted = squashed(normalize(target))
        if folded == wanted { return true }
        guard abs(folded.unicodeScalars.count - wanted.unicodeScalars.count) <= 2 else { return false }
        return editDistance(folded, wanted) <= 2
    }

    private static func squashed(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != "_" && $0 != "-" && $0 != " " }))
    }

    /// Levenshtein distance over Unicode scalars.
    package static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars)
        let b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}

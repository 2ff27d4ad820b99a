import FeatureGate
import Synchronization

/// The floor: one word in an `Atomic`, read with a relaxed load and a mask.
///
/// Nothing can check a flag for less, so `isEnabled` is measured against this. It lives in the benchmark module and
/// is used directly, so the compiler sees everything.
final class RawGate: Sendable {
    let bits: Atomic<UInt>

    init(_ features: Feature) {
        bits = Atomic(features.rawValue)
    }

    /// The raw check: a relaxed load, a mask, a compare.
    @inline(__always)
    func isEnabled(_ mask: UInt) -> Bool {
        bits.load(ordering: .relaxed) & mask == mask
    }
}

extension RawGate: ContendedGate {
    func check() -> Bool {
        isEnabled(Feature.analytics.rawValue)
    }

    func flip(_ on: Bool) {
        let push = Feature.push.rawValue
        if on {
            bits.bitwiseOr(push, ordering: .releasing)
        } else {
            bits.bitwiseAnd(~push, ordering: .releasing)
        }
    }
}

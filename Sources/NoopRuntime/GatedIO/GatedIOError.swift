import FeatureGate

/// Why a gated operation did not happen, or what the underlying resource reported.
///
/// Gated wrappers throw it with typed throws (`throws(GatedIOError)`): catching it as `GatedIOError` keeps a
/// refusal allocation-free, since nothing is boxed and `.gateClosed` carries only a bitmask.
public enum GatedIOError: Error, Sendable, CustomStringConvertible {
    /// The gate was closed: not every feature in the payload was enabled. The underlying resource was not
    /// touched.
    case gateClosed(Feature)
    /// An exit request was refused because the permit was not armed or already spent. Nothing was sent.
    case permitUnavailable
    /// The gate was open and the underlying resource failed with this error.
    case failed(any Error)

    /// What happened, in one sentence.
    public var description: String {
        switch self {
        case .gateClosed(let features): "refused: gate closed for \(features)"
        case .permitUnavailable: "refused: the one-shot exit permit is not available"
        case .failed(let error): "failed: \(error)"
        }
    }

    /// Whether this is a refusal at the gate (closed gate or spent permit) rather than a failure behind it.
    public var isRefusal: Bool {
        switch self {
        case .gateClosed, .permitUnavailable: true
        case .failed: false
        }
    }
}

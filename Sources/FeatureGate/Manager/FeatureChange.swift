/// One real change of the effective feature set, as an observer sees it.
public struct FeatureChange: Sendable, Hashable {
    /// The effective set before the change.
    public let previous: Feature
    /// The effective set after the change.
    public let current: Feature

    /// Creates a change record.
    public init(previous: Feature, current: Feature) {
        self.previous = previous
        self.current = current
    }

    /// The flags that went from off to on.
    public var enabled: Feature { current.subtracting(previous) }

    /// The flags that went from on to off: the edges on which a subsystem stops and purges.
    public var disabled: Feature { previous.subtracting(current) }
}

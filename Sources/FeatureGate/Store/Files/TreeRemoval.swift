/// What a tree removal deleted and what it could not.
package struct TreeRemoval: Sendable {
    /// The files (and links, FIFOs...) deleted, as paths relative to the tree's root, sorted.
    package var removed: [String] = []
    /// What could not be deleted.
    package var failures: [FileStoreError] = []
}

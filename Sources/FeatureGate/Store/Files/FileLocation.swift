import Foundation

/// Where a file operation acts: a directory the app named (the anchor) and a relative path below it.
///
/// The anchor's own parents are the app's choice and are resolved as usual; the anchor itself and everything below
/// it are reached without following symbolic links, one `openat` at a time, so nothing under the anchor can send an
/// operation elsewhere.
package struct FileLocation: Sendable, Equatable {
    /// The directory the app named, without trailing slashes.
    package let anchor: String
    /// The path below it, one component each; the last one is the file (or directory) acted on.
    package let components: [String]

    /// The file at `url`; its directory is the anchor.
    package init(file url: URL) {
        let (parent, name) = Self.split(url.path(percentEncoded: false))
        self.init(anchor: parent, components: [name])
    }

    /// The directory at `url` and a relative path inside it; `url`'s parent is the anchor.
    package init(directory url: URL, components: [String] = []) {
        let (parent, name) = Self.split(url.path(percentEncoded: false))
        self.init(anchor: parent, components: [name] + components)
    }

    /// A path below the directory at `url`, which is itself the anchor.
    package init(anchor url: URL, components: [String]) {
        let trimmed = Self.trimmed(url.path(percentEncoded: false))
        self.init(anchor: trimmed.isEmpty ? "." : String(trimmed), components: components)
    }

    package init(anchor: String, components: [String]) {
        self.anchor = anchor
        self.components = components
    }

    /// The whole path, for messages.
    package var path: String {
        var path = anchor == "/" ? "" : anchor
        for component in components {
            path.append("/")
            path.append(component)
        }
        return path
    }

    /// `path` without trailing slashes (a trailing slash would make the kernel follow a link there), `/` kept.
    private static func trimmed(_ path: String) -> Substring {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return trimmed
    }

    private static func split(_ path: String) -> (parent: String, name: String) {
        let trimmed = trimmed(path)
        guard let slash = trimmed.lastIndex(of: "/") else { return (".", String(trimmed)) }
        let parent = trimmed[..<slash]
        return (parent.isEmpty ? "/" : String(parent), String(trimmed[trimmed.index(after: slash)...]))
    }
}

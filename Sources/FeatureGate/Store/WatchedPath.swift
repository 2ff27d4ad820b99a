#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// Opening a path only to watch it (the Darwin `SystemDataDirectoryWatcher`'s dispatch sources).
package enum WatchedPath {
    /// The `open(2)` flags of a descriptor that is only watched: never blocks (a FIFO planted at a watched name
    /// would otherwise block the open until a writer comes, and the watcher arms inside `queue.sync`, so the launch
    /// would hang), never follows a symbolic link (like every other open of the package), and is not inherited by
    /// child processes. On Darwin, `O_EVTONLY` asks for event notification only, which does not keep a volume busy.
    package static var flags: Int32 {
        #if canImport(Darwin)
        O_EVTONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC
        #else
        O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC
        #endif
    }

    /// Opens `path` to watch it, or returns -1 with `errno` set.
    package static func open(_ path: String) -> Int32 {
        #if canImport(Glibc)
        Glibc.open(path, flags)
        #elseif canImport(Musl)
        Musl.open(path, flags)
        #elseif canImport(Darwin)
        Darwin.open(path, flags)
        #elseif canImport(Android)
        Android.open(path, flags)
        #endif
    }
}

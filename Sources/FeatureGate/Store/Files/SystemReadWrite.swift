// The files of this folder call libc (open, fsync, flock...) with `import Foundation` alone: Foundation re-exports
// the platform's C library everywhere (Darwin on Apple platforms; Glibc, Musl or Android in swift-corelibs-foundation).
import Foundation

// libc's `read` and `write`, for `AtomicFile`, whose static methods of the same names hide them. At file scope no
// member hides them, whichever module declares them on this platform.

/// libc's `read(2)`.
func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}

/// libc's `write(2)`.
func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}

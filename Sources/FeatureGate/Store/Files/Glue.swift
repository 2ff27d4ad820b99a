import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

/// The libc calls whose names clash with the static methods of `AtomicFile` (`read`, `write`).
enum Glue {
    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
        #elseif canImport(Musl)
        Musl.read(fd, buffer, count)
        #elseif canImport(Darwin)
        Darwin.read(fd, buffer, count)
        #elseif canImport(Android)
        Android.read(fd, buffer, count)
        #endif
    }

    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(fd, buffer, count)
        #elseif canImport(Musl)
        Musl.write(fd, buffer, count)
        #elseif canImport(Darwin)
        Darwin.write(fd, buffer, count)
        #elseif canImport(Android)
        Android.write(fd, buffer, count)
        #endif
    }
}

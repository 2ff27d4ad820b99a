// Shim of Apple's Darwin module for scripts/check-apple-branches.sh: Glibc, plus what Darwin declares that Glibc
// does not (or declares differently). Bodies never run; only the declarations matter.
@_exported import Glibc

// MARK: open(2) flags and fcntl(2) commands Darwin adds

/// `O_EVTONLY`: open for event notification only (no read or write access; does not keep a volume busy).
/// https://developer.apple.com/documentation/kernel/o_evtonly (value from <sys/fcntl.h>, macOS SDK)
public var O_EVTONLY: Int32 { 0x0000_8000 }

/// `F_FULLFSYNC`: flush the drive's own cache to permanent storage.
/// https://developer.apple.com/library/archive/documentation/System/Conceptual/ManPages_iPhoneOS/man2/fcntl.2.html
public var F_FULLFSYNC: Int32 { 51 }

/// `F_BARRIERFSYNC`: an I/O barrier: writes before it reach the disk before writes after it.
/// https://developer.apple.com/documentation/xcode/reducing-disk-writes (fcntl(2), macOS SDK <sys/fcntl.h>)
public var F_BARRIERFSYNC: Int32 { 85 }

// MARK: Socket options Darwin adds

/// `SO_NOSIGPIPE`: a write to a socket whose peer closed fails with `EPIPE` instead of raising `SIGPIPE`.
/// https://developer.apple.com/library/archive/documentation/System/Conceptual/ManPages_iPhoneOS/man2/setsockopt.2.html
/// (value from <sys/socket.h>, macOS SDK)
public var SO_NOSIGPIPE: Int32 { 0x1022 }

// MARK: struct stat's fields Darwin names differently

extension stat {
    /// `st_mtimespec`: the last data modification time (Glibc's `st_mtim`), a field of Darwin's `struct stat`.
    /// https://developer.apple.com/library/archive/documentation/System/Conceptual/ManPages_iPhoneOS/man2/stat.2.html
    public var st_mtimespec: timespec {
        get { st_mtim }
        set { st_mtim = newValue }
    }
}

// MARK: Constants whose type differs from Glibc's

// Glibc imports `SOCK_STREAM` as a case of the enum `__socket_type`; Darwin's <sys/socket.h> has a macro, which Swift
// imports as `Int32`. This declaration shadows Glibc's in the files that import Darwin.
/// `SOCK_STREAM`. https://developer.apple.com/library/archive/documentation/System/Conceptual/ManPages_iPhoneOS/man2/socket.2.html
public var SOCK_STREAM: Int32 { 1 }

// MARK: <dlfcn.h> (Glibc declares these only under _GNU_SOURCE)

/// `Dl_info`, filled by `dladdr`.
/// https://developer.apple.com/library/archive/documentation/System/Conceptual/ManPages_iPhoneOS/man3/dladdr.3.html
public struct Dl_info {
    public var dli_fname: UnsafePointer<CChar>!
    public var dli_fbase: UnsafeMutableRawPointer!
    public var dli_sname: UnsafePointer<CChar>!
    public var dli_saddr: UnsafeMutableRawPointer!
    public init() {}
}

/// https://developer.apple.com/library/archive/documentation/System/Conceptual/ManPages_iPhoneOS/man3/dladdr.3.html
public func dladdr(_ addr: UnsafeRawPointer!, _ info: UnsafeMutablePointer<Dl_info>!) -> Int32 { fatalError("shim") }

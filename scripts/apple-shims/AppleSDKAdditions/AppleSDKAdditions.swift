// What Apple's SDK declares in modules Linux also has (Foundation, Dispatch), but Linux's versions lack. The check
// imports this module implicitly into every file (`-import-module`), as the SDK's Foundation brings CoreFoundation.
// Bodies never run; only the declarations matter.
// Apple's Foundation re-exports Darwin (as Linux's re-exports Glibc): a file that imports Foundation alone can call
// libc, F_FULLFSYNC included.
// https://developer.apple.com/documentation/foundation
@_exported import Darwin
import Dispatch
import Foundation
// Apple's Foundation has URLSession and its types; Linux's keeps them in FoundationNetworking.
// https://developer.apple.com/documentation/foundation/urlsession
@_exported import FoundationNetworking

// MARK: CoreFoundation (re-exported by Foundation on Apple platforms)

/// https://developer.apple.com/documentation/corefoundation/cftypeid
public typealias CFTypeID = UInt

/// https://developer.apple.com/documentation/corefoundation/cftyperef
public typealias CFTypeRef = AnyObject

/// https://developer.apple.com/documentation/corefoundation/1521218-cfgettypeid
public func CFGetTypeID(_ cf: CFTypeRef!) -> CFTypeID { fatalError("shim") }

/// https://developer.apple.com/documentation/corefoundation/1541942-cfbooleangettypeid
public func CFBooleanGetTypeID() -> CFTypeID { fatalError("shim") }

// MARK: Dispatch: file-system object sources (kqueue's EVFILT_VNODE; Linux's Dispatch has none)

extension DispatchSource {
    // `DispatchSource.FileSystemEvent` itself is in Linux's Dispatch, with Apple's values.

    /// https://developer.apple.com/documentation/dispatch/dispatchsource/makefilesystemobjectsource(filedescriptor:eventmask:queue:)
    public class func makeFileSystemObjectSource(
        fileDescriptor: Int32, eventMask: DispatchSource.FileSystemEvent, queue: DispatchQueue? = nil
    ) -> any DispatchSourceFileSystemObject { fatalError("shim") }
}

/// https://developer.apple.com/documentation/dispatch/dispatchsourcefilesystemobject
public protocol DispatchSourceFileSystemObject: DispatchSourceProtocol {
    /// https://developer.apple.com/documentation/dispatch/dispatchsourcefilesystemobject/handle
    var handle: Int32 { get }
    /// https://developer.apple.com/documentation/dispatch/dispatchsourcefilesystemobject/data
    var data: DispatchSource.FileSystemEvent { get }
    /// https://developer.apple.com/documentation/dispatch/dispatchsourcefilesystemobject/mask
    var mask: DispatchSource.FileSystemEvent { get }
}

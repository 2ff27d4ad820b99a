// `hold DIR TEMPORARY`: a process that holds a data directory's lock, for the tests of callers that must not wait on
// another process (a lock holder stopped with SIGSTOP stands for a debugger, a suspended process, a slow disk).
import FeatureGate
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Takes `flock(LOCK_EX)` on `directory`'s lock file, optionally leaves a temporary file there, prints `saving` and
/// waits to be killed.
func holdLock(directory: URL, leavingTemporary: Bool) -> Never {
    let path = directory.path(percentEncoded: false)
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    let descriptor = open(path + "/.featuregate.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard descriptor >= 0, flock(descriptor, LOCK_EX) == 0 else { exit(1) }
    if leavingTemporary {
        let temporary = path + "/." + PrivacyDataDirectory.stateFileName + ".tmp-\(getpid())-1"
        FileManager.default.createFile(atPath: temporary, contents: Data("{".utf8))
    }
    FileHandle.standardOutput.write(Data("saving\n".utf8))
    while true { pause() }
}

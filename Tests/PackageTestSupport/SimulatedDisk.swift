import FeatureGate
import Foundation

/// An in-memory file system that the file layer's seam (``FileSystem``) can be bound to, with a disk that forgets
/// what was not flushed, as SQLite's crash tests and ALICE model one.
///
/// Every file has its contents as processes see them and its durable contents (what `fsync` last made durable);
/// every directory its entries as processes see them and its durable entries. A create, a rename, an unlink or a
/// `mkdir` is pending until its directory is flushed; a write until its file is. ``crashStates(of:)`` turns a state
/// into every state a power loss could leave: each pending directory operation applied or not (atomically: a
/// rename moves its name or does not), each unflushed file's new bytes dropped, kept, torn (cut half way) or zeroed.
///
/// Several simulated processes (``process()``) share one disk, each with its own descriptors; `flock` excludes
/// between them as the kernel's does (between descriptions, so also between two `open`s of one process). A blocking
/// `flock` that another process's lock refuses fails with `EWOULDBLOCK` at once (a simulated wait ends as a bounded
/// one whose bound passed), unless ``waitsForLocks``. ``kill(_:)`` ends a process as `SIGKILL` does. Not modelled:
/// symbolic links, permissions, sizes past memory.
public final class SimulatedDisk: @unchecked Sendable {
    /// What the disk holds, as processes see it and as it is durable. A value: copies are snapshots.
    public struct State: Sendable {
        fileprivate var nodes: [Int: Node] = [0: Node(isDirectory: true)]
        fileprivate var pending: [DirectoryChange] = []
        fileprivate var nextNode = 1

        /// The number of operations not yet durable: pending directory changes and unflushed files.
        public var unsyncedCount: Int { pending.count + nodes.values.filter { $0.data != $0.durableData }.count }

        /// What processes see: every path (a directory's ending in `/`) and its bytes. Two states that see the same
        /// start the same.
        public var visible: [String: [UInt8]] {
            var result: [String: [UInt8]] = [:]
            var queue = [("", 0)]
            while let (path, id) = queue.popLast() {
                guard let node = nodes[id] else { continue }
                if node.isDirectory {
                    result[path + "/"] = []
                    queue += node.entries.map { (path + "/" + $0.key, $0.value) }
                } else {
                    result[path] = node.data
                }
            }
            return result
        }
    }

    fileprivate struct Node: Sendable {
        var isDirectory: Bool
        var data: [UInt8] = []
        var durableData: [UInt8] = []
        var entries: [String: Int] = [:]
        var durableEntries: [String: Int] = [:]
    }

    /// One directory operation: entries set (to a node) or removed (`nil`) together.
    fileprivate struct DirectoryChange: Sendable {
        var changes: [(directory: Int, name: String, node: Int?)]
        var directories: Set<Int> { Set(changes.map(\.directory)) }
    }

    fileprivate final class Description {
        let node: Int
        var offset = 0
        let append: Bool
        init(node: Int, append: Bool) {
            self.node = node
            self.append = append
        }
    }

    /// The disk's lock, and what a blocking `flock` waits on when ``waitsForLocks``.
    private let lock = NSCondition()
    private var state: State
    private var descriptors: [Int: [Int32: Description]] = [:]
    private var nextDescriptor: Int32 = 1000
    private var processes = 0
    /// Who holds each node's `flock`: the description.
    private var locks: [Int: ObjectIdentifier] = [:]
    /// The directories removed (`rmdir`) while a process may still hold them open: as the kernel's, they take no new
    /// entry (`ENOENT`), so a writer that opened one before its removal finds out instead of writing into nowhere.
    private var removedDirectories: Set<Int> = []
    private var recording: [State]?
    /// The processes ``kill(_:)`` ended, and the one whose call runs now (under the disk's lock).
    private var dead: Set<Int> = []
    private var running = 0
    /// Called before every call a process makes (its number, the call's name), outside the disk's lock: a test
    /// schedules processes' steps here.
    public var beforeCall: (@Sendable (Int, String) -> Void)? {
        get { lock.withLock { hook } }
        set { lock.withLock { hook = newValue } }
    }
    private var hook: (@Sendable (Int, String) -> Void)?
    /// Whether a blocking `flock` waits until the holder lets go, as the kernel's does, instead of failing with
    /// `EWOULDBLOCK` at once: for a disk whose processes no schedule holds up (a fresh start's), where a process's own
    /// background work may hold the lock for a moment.
    public var waitsForLocks: Bool {
        get { lock.withLock { waits } }
        set { lock.withLock { waits = newValue } }
    }
    private var waits = false
    /// Called after every durable step (a call that writes, flushes or changes a directory) with the process that
    /// made it and the disk's state after it, under the disk's lock: it must not call the disk.
    public var afterStep: (@Sendable (Int, State) -> Void)? {
        get { lock.withLock { stepHook } }
        set { lock.withLock { stepHook = newValue } }
    }
    private var stepHook: (@Sendable (Int, State) -> Void)?

    /// A disk with the directories of `paths` (absolute) present and durable.
    public init(directories paths: [String] = []) {
        state = State()
        for path in paths { makeDurableDirectory(path) }
    }

    /// A disk that starts from `state` (a crash state, say), as it is.
    public init(state: State) {
        self.state = state
    }

    /// The disk's state now.
    public var snapshot: State { lock.withLock { state } }

    /// Makes everything durable, as a clean shutdown does.
    public func syncEverything() {
        lock.withLock {
            for (id, node) in state.nodes {
                state.nodes[id]?.durableData = node.data
                state.nodes[id]?.durableEntries = node.entries
            }
            state.pending = []
        }
    }

    /// Starts keeping the state after every durable step (every call that writes, flushes or changes a directory).
    public func startRecording() { lock.withLock { recording = [state] } }

    /// How many states were recorded since ``startRecording()`` so far (the index of the latest is one less).
    public var recordedCount: Int { lock.withLock { recording?.count ?? 0 } }

    /// The states recorded since ``startRecording()``: the first is before the first step, the last after the last.
    public func stopRecording() -> [State] {
        lock.withLock {
            defer { recording = nil }
            return recording ?? []
        }
    }

    /// The contents of the file at `path` as processes see it, or `nil`.
    public func contents(of path: String) -> Data? {
        lock.withLock {
            guard let id = resolve(path), let node = state.nodes[id], !node.isDirectory else { return nil }
            return Data(node.data)
        }
    }

    /// The names in the directory at `path`, or `nil`.
    public func entries(of path: String) -> [String]? {
        lock.withLock { resolve(path).flatMap { state.nodes[$0]?.entries.keys.sorted() } }
    }

    // MARK: Crashes

    /// What may be left of one pending operation after a power loss.
    public enum Loss: String, Sendable, CaseIterable {
        case dropped, kept, torn, zeroed
    }

    /// Every state a power loss in `state` could leave, with a description of each (for messages). At most
    /// `maximumPending` directory changes are combined freely (2^n); past that, only in the order they were made.
    public static func crashStates(of state: State, maximumPending: Int = 5) -> [(label: String, state: State)] {
        let pending = state.pending
        var subsets: [[Bool]]
        if pending.count <= maximumPending {
            subsets = (0..<(1 << pending.count)).map { mask in (0..<pending.count).map { mask & (1 << $0) != 0 } }
        } else {
            subsets = (0...pending.count).map { prefix in (0..<pending.count).map { $0 < prefix } }
        }
        let dirty = state.nodes.filter { !$0.value.isDirectory && $0.value.data != $0.value.durableData }.keys.sorted()
        let losses: [[Loss]] =
            dirty.count <= 2
            ? dirty.reduce([[]]) { partial, _ in partial.flatMap { prefix in Loss.allCases.map { prefix + [$0] } } }
            : Loss.allCases.map { Array(repeating: $0, count: dirty.count) }
        var result: [(String, State)] = []
        for applied in subsets {
            for loss in losses {
                var crashed = state
                for (index, change) in pending.enumerated() where applied[index] {
                    for (directory, name, node) in change.changes {
                        crashed.nodes[directory]?.durableEntries[name] = node
                    }
                }
                crashed.pending = []
                for (id, node) in crashed.nodes {
                    crashed.nodes[id]?.entries = node.durableEntries
                    crashed.nodes[id]?.data = node.durableData
                }
                for (index, id) in dirty.enumerated() {
                    let node = state.nodes[id]!
                    let common = zip(node.durableData, node.data).prefix(while: { $0 == $1 }).count
                    let kept: [UInt8]
                    switch loss[index] {
                    case .dropped: kept = node.durableData
                    case .kept: kept = node.data
                    case .torn: kept = Array(node.data.prefix(common + (node.data.count - common) / 2))
                    case .zeroed:
                        kept = Array(node.data.prefix(common)) + Array(repeating: 0, count: node.data.count - common)
                    }
                    crashed.nodes[id]?.data = kept
                    crashed.nodes[id]?.durableData = kept
                }
                let label =
                    "directory changes applied \(applied.map { $0 ? "1" : "0" }.joined()), files "
                    + zip(dirty, loss).map { "#\($0.0) \($0.1.rawValue)" }.joined(separator: " ")
                result.append((label, crashed))
            }
        }
        return result
    }

    // MARK: Processes

    /// A new simulated process on this disk: a file system with descriptors of its own. Its number is what
    /// ``beforeCall`` gets.
    package func process() -> FileSystem {
        let number = lock.withLock {
            processes += 1
            descriptors[processes] = [:]
            return processes
        }
        return makeFileSystem(process: number)
    }

    /// Takes `flock` on the file at `path` (created if missing) for a process outside every simulated one, one
    /// that is stopped holding it until ``releaseOutsideLock()``.
    public func holdLockOutside(_ path: String) {
        lock.withLock {
            let (parent, name) = split(path)
            guard let directory = resolve(parent) else { return }
            let id = state.nodes[directory]?.entries[name] ?? create(name, in: directory, isDirectory: false)
            locks[id] = ObjectIdentifier(outsideHolder)
        }
    }

    /// Lets go of what ``holdLockOutside(_:)`` took.
    public func releaseOutsideLock() {
        lock.withLock {
            locks = locks.filter { $0.value != ObjectIdentifier(outsideHolder) }
            lock.broadcast()
        }
    }

    private let outsideHolder = Description(node: -1, append: false)

    /// Ends `process` as `SIGKILL` does: its descriptors close (a `flock` only they held is let go), and every call it
    /// makes afterwards fails with `EIO` and changes nothing (the hooks do not see it). What it wrote stays as it is,
    /// durable or not: the kill of a process is no power loss.
    public func kill(_ process: Int) {
        lock.withLock {
            dead.insert(process)
            let closed = descriptors.removeValue(forKey: process) ?? [:]
            for description in closed.values { letGoIfLast(description) }
        }
    }

    // MARK: The calls

    // swift-format-ignore: FunctionLength
    private func makeFileSystem(process: Int) -> FileSystem {
        let call: @Sendable (String, () -> Int) -> Int = { [self] name, body in
            if isDead(process) { return Int(fail(EIO)) }
            beforeCall?(process, name)
            return lock.withLock {
                if dead.contains(process) { return Int(fail(EIO)) }
                running = process
                return body()
            }
        }
        let call32: @Sendable (String, () -> Int32) -> Int32 = { name, body in Int32(call(name) { Int(body()) }) }
        return FileSystem(
            open: { [self] path, flags, mode in
                call32("open") {
                    let (parent, name) = split(path)
                    guard let directory = resolve(parent) else { return fail(ENOENT) }
                    return openat(process, directory, name, flags)
                }
            },
            openat: { [self] fd, name, flags, mode in
                call32("openat") {
                    guard let directory = descriptors[process]?[fd]?.node else { return fail(EBADF) }
                    return openat(process, directory, name, flags)
                }
            },
            close: { [self] fd in
                call32("close") {
                    guard let description = descriptors[process]?.removeValue(forKey: fd) else { return fail(EBADF) }
                    letGoIfLast(description)
                    return 0
                }
            },
            dup: { [self] fd in
                call32("dup") {
                    guard let description = descriptors[process]?[fd] else { return fail(EBADF) }
                    nextDescriptor += 1
                    descriptors[process]?[nextDescriptor] = description
                    return nextDescriptor
                }
            },
            read: { [self] fd, buffer, count in
                call("read") {
                    guard let description = descriptors[process]?[fd] else { return Int(fail(EBADF)) }
                    let read = copy(description.node, from: description.offset, count: count, into: buffer)
                    description.offset += read
                    return read
                }
            },
            pread: { [self] fd, buffer, count, offset in
                call("pread") {
                    guard let description = descriptors[process]?[fd] else { return Int(fail(EBADF)) }
                    return copy(description.node, from: offset, count: count, into: buffer)
                }
            },
            write: { [self] fd, buffer, count in
                call("write") {
                    guard let description = descriptors[process]?[fd], let buffer else { return Int(fail(EBADF)) }
                    let bytes = Array(UnsafeRawBufferPointer(start: buffer, count: count))
                    var data = state.nodes[description.node]?.data ?? []
                    let start = description.append ? data.count : description.offset
                    if data.count < start { data += Array(repeating: 0, count: start - data.count) }
                    let end = start + count
                    if data.count < end { data += Array(repeating: 0, count: end - data.count) }
                    data.replaceSubrange(start..<end, with: bytes)
                    state.nodes[description.node]?.data = data
                    description.offset = end
                    stepped()
                    return count
                }
            },
            truncate: { [self] fd, length in
                call32("ftruncate") {
                    guard let description = descriptors[process]?[fd] else { return fail(EBADF) }
                    var data = state.nodes[description.node]?.data ?? []
                    if data.count > length { data.removeLast(data.count - length) }
                    state.nodes[description.node]?.data = data
                    stepped()
                    return 0
                }
            },
            sync: { [self] fd, _ in
                call32("fsync") {
                    guard let id = descriptors[process]?[fd]?.node, let node = state.nodes[id] else {
                        return fail(EBADF)
                    }
                    state.nodes[id]?.durableData = node.data
                    if node.isDirectory {
                        let (flushed, left) = state.pending.reduce(into: ([DirectoryChange](), [DirectoryChange]())) {
                            if $1.directories.contains(id) { $0.0.append($1) } else { $0.1.append($1) }
                        }
                        for change in flushed {
                            for (directory, name, node) in change.changes {
                                state.nodes[directory]?.durableEntries[name] = node
                            }
                        }
                        state.pending = left
                    }
                    stepped()
                    return 0
                }
            },
            renameat: { [self] from, old, to, new in
                call32("renameat") {
                    guard let source = descriptors[process]?[from]?.node, let target = descriptors[process]?[to]?.node
                    else { return fail(EBADF) }
                    guard let id = state.nodes[source]?.entries[old], !removedDirectories.contains(target) else {
                        return fail(ENOENT)
                    }
                    change([(source, old, nil), (target, new, id)])
                    return 0
                }
            },
            unlinkat: { [self] fd, name, flags in
                call32("unlinkat") {
                    guard let directory = descriptors[process]?[fd]?.node else { return fail(EBADF) }
                    guard let id = state.nodes[directory]?.entries[name], let node = state.nodes[id] else {
                        return fail(ENOENT)
                    }
                    if flags & AT_REMOVEDIR != 0 {
                        if !node.isDirectory { return fail(ENOTDIR) }
                        if !node.entries.isEmpty { return fail(ENOTEMPTY) }
                        removedDirectories.insert(id)
                    } else if node.isDirectory {
                        return fail(EISDIR)
                    }
                    change([(directory, name, nil)])
                    return 0
                }
            },
            mkdir: { [self] path, _ in
                call32("mkdir") {
                    let (parent, name) = split(path)
                    guard let directory = resolve(parent) else { return fail(ENOENT) }
                    return mkdirat(directory, name)
                }
            },
            mkdirat: { [self] fd, name, _ in
                call32("mkdirat") {
                    guard let directory = descriptors[process]?[fd]?.node else { return fail(EBADF) }
                    return mkdirat(directory, name)
                }
            },
            fstat: { [self] fd, status in
                call32("fstat") {
                    guard let id = descriptors[process]?[fd]?.node else { return fail(EBADF) }
                    return describe(id, into: status)
                }
            },
            fstatat: { [self] fd, name, status, _ in
                call32("fstatat") {
                    guard let directory = descriptors[process]?[fd]?.node else { return fail(EBADF) }
                    guard let id = state.nodes[directory]?.entries[name] else { return fail(ENOENT) }
                    return describe(id, into: status)
                }
            },
            lstat: { [self] path, status in
                call32("lstat") {
                    guard let id = resolve(path) else { return fail(ENOENT) }
                    return describe(id, into: status)
                }
            },
            fchmodat: { _, _, _, _ in call32("fchmodat") { 0 } },
            flock: { [self] fd, operation in
                call32("flock") {
                    guard let description = descriptors[process]?[fd] else { return fail(EBADF) }
                    if operation & LOCK_UN != 0 {
                        if locks[description.node] == ObjectIdentifier(description) {
                            locks[description.node] = nil
                            lock.broadcast()
                        }
                        return 0
                    }
                    while let holder = locks[description.node], holder != ObjectIdentifier(description) {
                        guard waits && operation & LOCK_NB == 0 else { return fail(EWOULDBLOCK) }
                        lock.wait()
                    }
                    locks[description.node] = ObjectIdentifier(description)
                    return 0
                }
            },
            entries: { [self] fd in
                if isDead(process) {
                    _ = fail(EIO)
                    return nil
                }
                beforeCall?(process, "readdir")
                return lock.withLock {
                    if dead.contains(process) {
                        _ = fail(EIO)
                        return nil
                    }
                    guard let id = descriptors[process]?[fd]?.node, let node = state.nodes[id], node.isDirectory else {
                        _ = fail(ENOTDIR)
                        return nil
                    }
                    return node.entries.keys.sorted()
                }
            })
    }

    // MARK: Under the disk's lock

    private func fail(_ code: Int32) -> Int32 {
        errno = code
        return -1
    }

    private func isDead(_ process: Int) -> Bool { lock.withLock { dead.contains(process) } }

    /// Lets go of the `flock` of `description`, closed in one process, when no descriptor of any process has it.
    private func letGoIfLast(_ description: Description) {
        let stillOpen = descriptors.values.contains { $0.values.contains { $0 === description } }
        if !stillOpen && locks[description.node] == ObjectIdentifier(description) {
            locks[description.node] = nil
            lock.broadcast()
        }
    }

    private func stepped() {
        recording?.append(state)
        stepHook?(running, state)
    }

    private func change(_ changes: [(directory: Int, name: String, node: Int?)]) {
        for (directory, name, node) in changes { state.nodes[directory]?.entries[name] = node }
        state.pending.append(DirectoryChange(changes: changes))
        stepped()
    }

    private func create(_ name: String, in directory: Int, isDirectory: Bool) -> Int {
        let id = state.nextNode
        state.nextNode += 1
        state.nodes[id] = Node(isDirectory: isDirectory)
        change([(directory, name, id)])
        return id
    }

    private func openat(_ process: Int, _ directory: Int, _ name: String, _ flags: Int32) -> Int32 {
        guard state.nodes[directory]?.isDirectory == true else { return fail(ENOTDIR) }
        var id = state.nodes[directory]?.entries[name]
        if name == "." { id = directory }
        if id != nil && flags & O_CREAT != 0 && flags & O_EXCL != 0 { return fail(EEXIST) }
        if id == nil {
            guard flags & O_CREAT != 0, !removedDirectories.contains(directory) else { return fail(ENOENT) }
            id = create(name, in: directory, isDirectory: false)
        }
        guard let id, let node = state.nodes[id] else { return fail(ENOENT) }
        if node.isDirectory && flags & (O_WRONLY | O_RDWR) != 0 { return fail(EISDIR) }
        if !node.isDirectory && flags & O_DIRECTORY != 0 { return fail(ENOTDIR) }
        nextDescriptor += 1
        descriptors[process]?[nextDescriptor] = Description(node: id, append: flags & O_APPEND != 0)
        return nextDescriptor
    }

    private func mkdirat(_ directory: Int, _ name: String) -> Int32 {
        guard state.nodes[directory]?.isDirectory == true else { return fail(ENOTDIR) }
        if state.nodes[directory]?.entries[name] != nil { return fail(EEXIST) }
        if removedDirectories.contains(directory) { return fail(ENOENT) }
        _ = create(name, in: directory, isDirectory: true)
        return 0
    }

    private func copy(_ id: Int, from offset: Int, count: Int, into buffer: UnsafeMutableRawPointer?) -> Int {
        let data = state.nodes[id]?.data ?? []
        guard offset < data.count, let buffer else { return 0 }
        let end = min(data.count, offset + count)
        data[offset..<end].withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: end - offset) }
        return end - offset
    }

    private func describe(_ id: Int, into status: UnsafeMutablePointer<stat>) -> Int32 {
        guard let node = state.nodes[id] else { return fail(ENOENT) }
        var result = stat()
        result.st_mode = node.isDirectory ? (S_IFDIR | 0o700) : (S_IFREG | 0o600)
        result.st_size = off_t(node.data.count)
        result.st_ino = ino_t(id)
        result.st_nlink = 1
        #if canImport(Darwin)
        result.st_mtimespec.tv_sec = time(nil)
        #else
        result.st_mtim.tv_sec = time(nil)
        #endif
        status.pointee = result
        return 0
    }

    private func split(_ path: String) -> (parent: String, name: String) {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return (".", String(trimmed)) }
        let parent = trimmed[..<slash]
        return (parent.isEmpty ? "/" : String(parent), String(trimmed[trimmed.index(after: slash)...]))
    }

    private func resolve(_ path: String) -> Int? {
        var id = 0
        for component in path.split(separator: "/") where component != "." {
            guard let next = state.nodes[id]?.entries[String(component)] else { return nil }
            id = next
        }
        return id
    }

    private func makeDurableDirectory(_ path: String) {
        var id = 0
        for component in path.split(separator: "/") {
            let name = String(component)
            if let next = state.nodes[id]?.entries[name] {
                id = next
                continue
            }
            let next = state.nextNode
            state.nextNode += 1
            state.nodes[next] = Node(isDirectory: true)
            state.nodes[id]?.entries[name] = next
            state.nodes[id]?.durableEntries[name] = next
            id = next
        }
    }
}

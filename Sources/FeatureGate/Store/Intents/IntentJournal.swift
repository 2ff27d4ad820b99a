import Foundation

/// The take-aways (and kill-switch payloads) made durable without the data directory's lock: one file per change in
/// the folder ``directoryName`` of the directory, folded first by every holder of its lock and read over the stored
/// state by every start.
///
/// Recording one (``record(_:in:)``) takes no lock: the intent is written to a temporary file in the folder, flushed
/// (`fsync`), renamed to its final name (`NANOSECONDS-PID-COUNTER.intent`, so names sort in the order the changes
/// were made, and a process's own in its order), and the folder and the directory are flushed; only then does the
/// call return. A crash before the rename leaves a temporary file, which is no intent (the call never returned).
///
/// Folding (``fold(in:)``), under the lock: every intent, in name order, has its records appended to the ledger (one
/// the ledger's tail already holds is not appended twice), its payload written to the remote layer's file (only over
/// the bytes it was recorded over) and its take-aways applied to the gate state file, each flushed; then the intents
/// are deleted. An intent of a newer format (``TakeAwayIntent/version``) is neither folded nor deleted, nor is any
/// made after it: the build that wrote it folds them. A crash in between folds them again, which changes nothing
/// more: a take-away applied twice takes nothing more away, and a payload replaces only the bytes it was recorded
/// over.
/// Every ``AtomicFile/DirectoryLock`` folds as soon as it takes the lock, before the operation it was taken for
/// reads anything, so no writer of the directory acts on a state that lacks an acknowledged "no".
package enum IntentJournal {
    /// `.featuregate-intents`: the folder, created by the first intent and removed by the fold that empties it.
    package static let directoryName = ".featuregate-intents"
    /// What an intent's file name ends with.
    static let suffix = ".intent"
    /// The largest intent read: a few records (revoke-all's, a handful), or a kill-switch payload (at most
    /// ``RemoteLayerFile/maximumSize`` bytes, in base64).
    static let maximumSize = 256 * 1024 + 2 * RemoteLayerFile.maximumSize

    /// For crash enumeration in tests: how many durable steps of a fold on this task may run before the fold stops
    /// as a process killed there would (`nil`: every step).
    @TaskLocal package static var stepsBeforeCrash: CrashBudget?

    /// A number of steps left, counted down by each durable step of a fold.
    package final class CrashBudget: @unchecked Sendable {
        private var left: Int
        /// How many steps ran.
        package private(set) var taken = 0
        package init(steps: Int) { left = steps }
        /// Whether the next step may run; counts it.
        func take() -> Bool {
            guard left > 0 else { return false }
            left -= 1
            taken += 1
            return true
        }
    }

    /// Whether the next durable step of a fold may run (always, outside crash enumeration).
    private static func step() -> Bool { stepsBeforeCrash?.take() ?? true }

    private static let counter = AtomicWord<UInt>(0)
    private static let lastTime = LockedValue<UInt64>(0)

    // MARK: Recording

    /// Makes `intent` durable in the directory `anchor` without its lock: on disk (file, folder and directory
    /// flushed) before it returns.
    ///
    /// Something other than a folder at ``directoryName`` (a link, a FIFO, a file) is moved aside first, as a
    /// foreign lock file is replaced: it cannot hold intents, and leaving it would make every held "no" non-durable.
    ///
    /// With `durability` ``AtomicFile/Durability/unflushed`` nothing is flushed: the intent is in the operating
    /// system's hands when the call returns (a kill of the process keeps it), not on the disk (a power loss may drop
    /// it, or tear it: a torn intent does not decode and is skipped, as one never acknowledged). That is the gate's
    /// take-away on the caller's thread; its flusher then makes it durable (``removeCommitted(_:in:)``).
    ///
    /// - Returns: Where a foreign entry found at ``directoryName`` was moved, if one was (to report it).
    /// - Throws: ``FileStoreError`` when it could not be written.
    @discardableResult
    package static func record(
        _ intent: TakeAwayIntent, in anchor: String, durability: AtomicFile.Durability = .full
    ) throws(FileStoreError) -> String? {
        let data = intent.encoded()
        let name = nextName()
        var lastError = FileStoreError(path: anchor, operation: .write, code: EIO)
        var movedAside: String?
        // A fold may remove the folder between its creation and the rename: tried again then.
        for _ in 0..<4 {
            do throws(FileStoreError) {
                try write(data, named: name, in: anchor, flushed: durability != .unflushed, movedAside: &movedAside)
                return movedAside
            } catch {
                lastError = error
                guard error.code == ENOENT || (error.code == ENOTDIR && movedAside != nil) else { throw error }
            }
        }
        throw lastError
    }

    /// Moves the entry at ``directoryName`` in `directory` aside when it is not a folder (never following it);
    /// returns its new name, or `nil` when it is a folder, is gone, or could not be moved.
    private static func moveAsideForeignEntry(in directory: Int32) -> String? {
        let fs = FileSystem.active
        var status = stat()
        guard fs.fstatat(directory, directoryName, &status, AT_SYMLINK_NOFOLLOW) == 0,
            status.st_mode & S_IFMT != S_IFDIR
        else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let aside = "\(directoryName).foreign-\(now.tv_sec)-\(now.tv_nsec)-\(getpid())"
        guard fs.renameat(directory, directoryName, directory, aside) == 0 else { return nil }
        AtomicFile.flushDirectory(directory)
        return aside
    }

    /// A name later than every name this process made before, and than the clock's now.
    private static func nextName() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nanoseconds = UInt64(max(0, now.tv_sec)) * 1_000_000_000 + UInt64(max(0, now.tv_nsec))
        let time = lastTime.withLock { last in
            last = max(last + 1, nanoseconds)
            return last
        }
        let sequence = counter.add(1, ordering: .relaxed).newValue
        let padded = String(time).leftPadded(to: 20)
        return "\(padded)-\(String(getpid()).leftPadded(to: 10))-\(String(sequence).leftPadded(to: 8))\(suffix)"
    }

    private static func write(
        _ data: Data, named name: String, in anchor: String, flushed: Bool, movedAside: inout String?
    ) throws(FileStoreError) {
        let folderPath = anchor + "/" + directoryName
        let fs = FileSystem.active
        let directory = fs.open(anchor, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        if directory < 0 { throw FileStoreError(path: anchor, operation: .open, code: errno) }
        defer { _ = fs.close(directory) }
        let created = fs.mkdirat(directory, directoryName, 0o700) == 0
        if !created && errno != EEXIST {
            throw FileStoreError(path: folderPath, operation: .createDirectory, code: errno)
        }
        let folder = fs.openat(directory, directoryName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        if folder < 0 {
            if [ENOTDIR, ELOOP].contains(errno), movedAside == nil, let aside = moveAsideForeignEntry(in: directory) {
                movedAside = anchor + "/" + aside
                throw FileStoreError(path: folderPath, operation: .open, code: ENOTDIR)  // Tried again.
            }
            throw AtomicFile.error(
                path: folderPath, operation: .open, errno: errno, at: directoryName, in: directory, directory: true)
        }
        defer { _ = fs.close(folder) }
        let temporary = AtomicFile.temporaryName(for: name)
        let fd = fs.openat(folder, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd < 0 { throw FileStoreError(path: folderPath + "/" + temporary, operation: .open, code: errno) }
        var failure: FileStoreError?
        if let code = AtomicFile.writeAll(data, to: fd) {
            failure = FileStoreError(path: folderPath + "/" + temporary, operation: .write, code: code)
        } else if flushed && AtomicFile.flushToDisk(fd, .full) != 0 {
            failure = FileStoreError(path: folderPath + "/" + temporary, operation: .sync, code: errno)
        }
        _ = fs.close(fd)
        if failure == nil && fs.renameat(folder, temporary, folder, name) != 0 {
            failure = FileStoreError(path: folderPath + "/" + name, operation: .rename, code: errno)
        }
        if let failure {
            _ = fs.unlinkat(folder, temporary, 0)
            throw failure
        }
        // The rename, and the folder's own entry when it was just created, reach the disk before the call returns.
        guard flushed else { return }
        if AtomicFile.flushToDisk(folder, .full) != 0 {
            throw FileStoreError(path: folderPath, operation: .sync, code: errno)
        }
        if created { AtomicFile.flushDirectory(directory) }
    }

    // MARK: Reading

    /// The intents waiting in the directory `anchor`, in the order they were made, as they may be taken (see
    /// ``vetted(_:in:)``); reads only (no lock, no write). One that cannot be decoded is left out (it was never
    /// acknowledged: the rename comes after the flush).
    package static func pending(in anchor: String) -> [TakeAwayIntent] {
        pendingFiles(in: anchor).files.map(\.intent)
    }

    /// The intents waiting in a directory, read once: those that may be taken, and those skipped or cut.
    package struct Pending {
        /// The intents with their file names, in the order they were made: readable ones as they may be taken
        /// (names checked, giving records left out), those of a newer format as found.
        package var files: [(name: String, intent: TakeAwayIntent)] = []
        /// Each intent skipped (it names a file it may not) or cut (a record that gives): its path, and why.
        package var ignored: [(file: String, reason: String)] = []
    }

    /// Whether the directory `anchor` has an intents folder: one `fstatat`, the cost every lock holder pays.
    static func hasFolder(in anchor: Int32) -> Bool {
        var status = stat()
        return FileSystem.active.fstatat(anchor, directoryName, &status, AT_SYMLINK_NOFOLLOW) == 0
    }

    /// The intents waiting in the directory `anchor` with their file names, in the order they were made, each
    /// vetted (``vetted(_:in:)``); reads only.
    package static func pendingFiles(in anchor: String) -> Pending {
        let folder = FileLocation(anchor: anchor, components: [directoryName])
        guard let names = (try? AtomicFile.entriesIfPresent(of: folder)) ?? nil else { return Pending() }
        var pending = Pending()
        let listed = names.filter({ $0.hasSuffix(suffix) && !$0.hasPrefix(".") }).sorted(byName: \.self)
        let decoded = decodedIntents(listed, in: anchor)
        for name in listed {
            let location = FileLocation(anchor: anchor, components: [directoryName, name])
            guard let intent = decoded[name] else { continue }
            // One of a newer format is followed by nothing here: it is kept as found, and holds what comes after.
            guard intent.isReadable else {
                pending.files.append((name, intent))
                continue
            }
            let (vetted, reasons) = Self.vetted(intent, in: anchor)
            pending.ignored += reasons.map { (location.path, $0) }
            if let vetted { pending.files.append((name, vetted)) }
        }
        return pending
    }

    /// The intents already read, per file system, directory and name: an intent's file is written once, under a
    /// name no other intent takes, and never changed, so each is read once per process however often the folder is
    /// listed (by a start's gate, consent and remote layer, and by each fold). Only the names listed last are kept.
    private static let readIntents = LockedValue<[ReadKey: [String: TakeAwayIntent]]>([:])

    private struct ReadKey: Hashable {
        let fileSystem: ObjectIdentifier
        let anchor: String
    }

    /// The intents of `names` (listed in the folder of the directory `anchor`) that decode, read once.
    private static func decodedIntents(_ names: [String], in anchor: String) -> [String: TakeAwayIntent] {
        let key = ReadKey(fileSystem: ObjectIdentifier(FileSystem.active), anchor: anchor)
        let known = readIntents.withLock { $0[key] ?? [:] }
        var result: [String: TakeAwayIntent] = [:]
        let decoder = JSONDecoder()
        for name in names {
            if let intent = known[name] {
                result[name] = intent
                continue
            }
            let location = FileLocation(anchor: anchor, components: [directoryName, name])
            guard let data = try? AtomicFile.read(location, limit: maximumSize),
                let intent = try? decoder.decode(TakeAwayIntent.self, from: data)
            else { continue }
            result[name] = intent
        }
        // Large payloads are not kept: reading one again costs less than holding it.
        let kept = result.filter { $0.value.remote.map { $0.payload.count <= 64 * 1024 } ?? true }
        readIntents.withLock { $0[key] = kept.isEmpty ? nil : kept }
        return result
    }

    /// `records` with those the ledger file at `ledger` already holds in its last bytes left out: what a fold a crash
    /// cut short appended already.
    package static func recordsNotInLedger(_ records: [ConsentRecord], ledger: FileLocation) -> [ConsentRecord] {
        guard !records.isEmpty else { return [] }
        let lines = records.map(ConsentRecordLine.encode)
        // As far back as all of them take (a fold appends them in one write), and 64 KiB more.
        let window = lines.reduce(64 * 1024) { $0 + $1.count }
        var isFromStart = false
        let tail =
            (try? AtomicFile.withOpenedFile(ledger, limit: FileConsentLedger.maximumFileSize) {
                (file) throws(FileStoreError) -> Data in
                guard let file else { return Data() }
                isFromStart = file.size <= window
                return try file.read(max(0, file.size - window)..<file.size)
            }) ?? Data()
        guard !tail.isEmpty else { return records }
        return zip(records, lines).filter { !Self.contains(line: $0.1, in: tail, isFromStart: isFromStart) }.map(\.0)
    }

    /// Whether `tail` (the end of a ledger; `isFromStart`: the whole of it) holds `line` (a whole line, its newline
    /// included) as one of its lines, compared byte for byte where it starts a line: nothing is allocated per line
    /// of the window, however many it holds.
    private static func contains(line: Data, in tail: Data, isFromStart: Bool) -> Bool {
        var from = tail.startIndex
        while let found = tail.range(of: line, in: from..<tail.endIndex) {
            let startsLine =
                found.lowerBound == tail.startIndex
                ? isFromStart : tail[found.lowerBound - 1] == UInt8(ascii: "\n")
            if startsLine { return true }
            from = found.lowerBound + 1
        }
        return false
    }

    // MARK: Folding

    /// Applies every intent of the directory `anchor` to its gate state and ledger, then deletes them. Called with
    /// the directory's lock held (every operation inside finds it held); does nothing, beyond one `fstatat`, when
    /// there is none.
    static func fold(in anchor: String) {
        let pending = pendingFiles(in: anchor).files
        let folder = FileLocation(anchor: anchor, components: [directoryName])
        guard !pending.isEmpty else {
            removeFolderIfEmpty(folder)
            return
        }
        // In order, up to the first one of a newer format: what comes after it must not land before it.
        let files = Array(pending.prefix { $0.intent.isReadable })
        let anchorURL = URL(filePath: anchor, directoryHint: .isDirectory)
        // The records first, in order: the ledger is the commit point, and a state a crash left behind is replayed.
        // Where they went, when one ledger took them all: a state that reflected the ledger up to them reflects it
        // to their end once they are folded into it.
        var appended: Range<Int>?
        let ledgerGroups = grouped(files.map(\.intent), by: \.ledgerFile)
        for (ledgerFile, intents) in ledgerGroups {
            guard let ledgerFile else { continue }
            let ledger = FileConsentLedger(url: anchorURL.appending(path: ledgerFile, directoryHint: .notDirectory))
            let records = recordsNotInLedger(
                intents.flatMap(\.records), ledger: FileLocation(anchor: anchor, components: [ledgerFile]))
            // All of them in one append: a ledger that refuses it keeps the intents, for the next fold.
            guard step() else { return }
            do {
                // Some already there: a fold killed after its append's write, maybe before its flush.
                if records.count < intents.reduce(0, { $0 + $1.records.count }) {
                    flushFile(FileLocation(anchor: anchor, components: [ledgerFile]))
                }
                let range = try ledger.append(contentsOf: records)
                if ledgerGroups.count(where: { $0.0 != nil }) == 1 { appended = range }
            } catch {
                return
            }
        }
        // The payloads next: each replaces only the bytes it was recorded over.
        for (remoteFile, intents) in grouped(files.compactMap(\.intent.remote), by: { $0.file }) {
            guard let remoteFile else { continue }  // (Never nil: every payload names its file.)
            guard step() else { return }
            do {
                try AtomicFile.update(
                    FileLocation(anchor: anchor, components: [remoteFile]), limit: RemoteLayerFile.maximumFileSize
                ) { data in
                    let folded = RemoteLayerFile.folding(intents, over: data ?? Data())
                    return folded == (data ?? Data()) ? nil : folded
                }
            } catch {
                return
            }
        }
        for (stateFile, intents) in grouped(files.map(\.intent), by: \.stateFile) {
            guard let stateFile else { continue }
            var isNewer = false
            guard step() else { return }
            do {
                try AtomicFile.update(
                    FileLocation(anchor: anchor, components: [stateFile]), limit: FileFeatureStore.maximumRecordSize
                ) { data in
                    var base = FeatureStateRecord(enabledFeatures: [], decidedFeatures: [])
                    if let data {
                        switch PrivacyManager.storedForUpdate(data) {
                        case .failure:
                            // A newer format is not rewritten: the intents stay, and every start reads them.
                            isNewer = true
                            return nil
                        case .success(let record): base = record ?? base
                        }
                    }
                    var record = intents.reduce(base) { $1.applied(to: $0) }
                    if let appended, record.ledgerLength == appended.lowerBound {
                        record.ledgerLength = appended.upperBound
                    }
                    let folded = record.encoded()
                    return folded == data ? nil : folded
                }
            } catch {
                return
            }
            if isNewer { return }
        }
        // Every folded intent deleted, the folder flushed once.
        guard removeFolded(files.map(\.name), in: anchor), step(), files.count == pending.count else { return }
        removeFolderIfEmpty(folder)
    }

    /// Deletes the intents `names` of the folder in the directory `anchor`, then flushes the folder once; `false`
    /// when a crash budget stopped it part-way.
    private static func removeFolded(_ names: [String], in anchor: String) -> Bool {
        let fs = FileSystem.active
        let directory = fs.open(anchor, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        guard directory >= 0 else { return true }
        defer { _ = fs.close(directory) }
        let folder = fs.openat(directory, directoryName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        guard folder >= 0 else { return true }
        defer { _ = fs.close(folder) }
        var finished = true
        for name in names {
            guard step() else {
                finished = false
                break
            }
            _ = fs.unlinkat(folder, name, 0)
        }
        // A plain flush: an intent that comes back after a power loss is folded again (its records are not appended
        // twice), and any later write's flush or barrier reaches the disk after this one.
        if finished { AtomicFile.flushDirectory(folder, .plain) }
        return finished
    }

    /// Deletes the intents `names` of the directory `anchor`, which a save made under its lock has just folded into
    /// the gate state (its data flushed, its rename not yet), and removes the folder if that empties it. The directory
    /// is flushed first, so the state's rename is on the disk before any intent it took in is deleted: a power loss
    /// can then never keep a deletion and lose the rename (which would lose a take-away another process had flushed).
    /// The deletions themselves are left to a later flush (a plain one of the folder when it stays): intents that come
    /// back after a power loss are folded again, which takes nothing more away. Called with the lock held.
    ///
    /// With `tookRecords` (consent records among the intents, appended to the ledger just before), the deletions are
    /// flushed too, once: a refusal's intent that came back after a power loss would be folded again over a grant
    /// made since, whose gate state is committed by its ledger line without a flush of the directory. With
    /// `isCommittedByLedger` (the state's new point covers every record the intents held, and they held nothing
    /// else), the flush before the deletions is left out: a power loss that keeps them and loses the rename leaves
    /// the state at the records' start, and the next start replays them.
    ///
    /// - Returns: Whether the folder was removed.
    @discardableResult
    package static func removeCommitted(
        _ names: [String], in anchor: String, tookRecords: Bool = false, isCommittedByLedger: Bool = false
    ) -> Bool {
        let fs = FileSystem.active
        let directory = fs.open(anchor, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        guard directory >= 0 else { return false }
        defer { _ = fs.close(directory) }
        if !isCommittedByLedger { AtomicFile.flushDirectory(directory) }
        guard !names.isEmpty else { return false }
        let folder = fs.openat(directory, directoryName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        guard folder >= 0 else { return false }
        defer { _ = fs.close(folder) }
        for name in names { _ = fs.unlinkat(folder, name, 0) }
        let removed = fs.unlinkat(directory, directoryName, AT_REMOVEDIR) == 0
        if !removed {
            AtomicFile.flushDirectory(folder, .plain)
        } else if tookRecords || isCommittedByLedger {
            AtomicFile.flushDirectory(directory, .plain)
        }
        return removed
    }

    /// Flushes the file at `location` (the ledger, whose lines an intent's records found there may have been written
    /// by a fold killed before its flush): what the state written next takes for committed is then on the disk.
    package static func flushFile(_ location: FileLocation) {
        let fs = FileSystem.active
        let directory = fs.open(location.anchor, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        guard directory >= 0 else { return }
        defer { _ = fs.close(directory) }
        let fd = fs.openat(directory, location.components[0], O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0)
        guard fd >= 0 else { return }
        _ = AtomicFile.flushToDisk(fd, .full)
        _ = fs.close(fd)
    }

    /// Flushes every pending intent of the directory `anchor`, their folder and its entry: what a fold could not
    /// take in (a ledger that refused its records) is then on the disk, as an intent recorded flushed is.
    package static func flushPending(in anchor: String) {
        let fs = FileSystem.active
        let directory = fs.open(anchor, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        guard directory >= 0 else { return }
        defer { _ = fs.close(directory) }
        let folder = fs.openat(directory, directoryName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        guard folder >= 0 else { return }
        defer { _ = fs.close(folder) }
        for file in pendingFiles(in: anchor).files {
            let fd = fs.openat(folder, file.name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0)
            guard fd >= 0 else { continue }
            _ = AtomicFile.flushToDisk(fd, .full)
            _ = fs.close(fd)
        }
        AtomicFile.flushDirectory(folder)
        AtomicFile.flushDirectory(directory)
    }

    private static func modificationSeconds(_ status: stat) -> Int {
        #if canImport(Darwin)
        Int(status.st_mtimespec.tv_sec)
        #else
        Int(status.st_mtim.tv_sec)
        #endif
    }

    /// `intents` grouped by `key`, the groups in the order their keys first appear, each in its order.
    private static func grouped<Element>(_ intents: [Element], by key: (Element) -> String?) -> [(String?, [Element])] {
        groupedIndices(intents.map(key)).map { group in (group.key, group.indices.map { intents[$0] }) }
    }

    /// The indices of `keys` grouped by key, as ``grouped(_:by:)`` groups. Not generic: one copy, and one dictionary
    /// type, for every kind of element grouped.
    private static func groupedIndices(_ keys: [String?]) -> [(key: String?, indices: [Int])] {
        var order: [String?] = []
        var groups: [String?: [Int]] = [:]
        for (index, key) in keys.enumerated() {
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(index)
        }
        return order.map { ($0, groups[$0] ?? []) }
    }

    /// Removes the folder when nothing is left in it but temporary files older than a minute (of recordings a crash
    /// cut short; a recording in progress is younger). An intent created meanwhile keeps it (`ENOTEMPTY`).
    private static func removeFolderIfEmpty(_ folder: FileLocation) {
        let fs = FileSystem.active
        let anchor = fs.open(folder.anchor, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        guard anchor >= 0 else { return }
        defer { _ = fs.close(anchor) }
        let fd = fs.openat(anchor, directoryName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        guard fd >= 0 else { return }
        var removed = false
        for name in (try? AtomicFile.entries(of: folder)) ?? [] where AtomicFile.isTemporaryName(name) {
            var status = stat()
            if fs.fstatat(fd, name, &status, AT_SYMLINK_NOFOLLOW) == 0,
                Int(time(nil)) - modificationSeconds(status) > 60
            {
                removed = fs.unlinkat(fd, name, 0) == 0 || removed
            }
        }
        if removed { AtomicFile.flushDirectory(fd, .plain) }
        _ = fs.close(fd)
        // An empty folder that comes back after a power loss holds nothing to fold, and the next fold removes it.
        if fs.unlinkat(anchor, directoryName, AT_REMOVEDIR) == 0 { AtomicFile.flushDirectory(anchor, .plain) }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

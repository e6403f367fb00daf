import FoundationEssentials
import SpotterCore

#if canImport(Glibc)
import Glibc
#endif

/// Chat attachments: each file once on disk under its SHA-256 (`<directory>/<hash>`), and a row per thread it
/// was uploaded to (`attachment`): only that thread's participants may read it. The file is written and synced
/// before its row is committed, so a row never names a missing file. Blocking: call from a worker thread.
public final class AttachmentStore: Sendable {
    /// Where the rows go: the accounts' engine (SQLite or PostgreSQL), through the server's one writer.
    let engine: any AccountsEngine
    public let directory: String

    public init(engine: any AccountsEngine, directory: String) {
        self.engine = engine
        self.directory = directory
    }

    public struct Saved: Sendable, Equatable {
        public var id: String
        public var type: String
        public var bytes: Int
    }

    /// Keeps `bytes` (of a checked `type`) for `threadID`. Uploading the same file again to the same thread
    /// answers the same id.
    public func save(_ bytes: [UInt8], type: String, threadID: String, uploaderID: String, now: Int64) throws -> Saved {
        let id = try keep(bytes)
        let count = bytes.count
        try engine.write({ db in
            try db.execute("""
                INSERT INTO attachment (id, threadId, uploaderId, type, bytes, createdAt) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (id, threadId) DO NOTHING
                """, [id, threadID, uploaderID, type, count, now])
        }, afterCommit: { _ in })
        return Saved(id: id, type: type, bytes: bytes.count)
    }

    /// Writes `bytes` (durably, once) under their SHA-256 and answers it, with no thread row: for files that
    /// belong to a user rather than a thread (the avatar), whose owner records the id.
    public func keep(_ bytes: [UInt8]) throws -> String {
        let id = Digest.hex(Digest.sha256(bytes))
        try Self.makeDirectory(directory)
        let path = directory + "/" + id
        if access(path, F_OK) != 0 { try Self.writeDurably(bytes, to: path) }
        return id
    }

    /// `save`, for an upload already on disk at `path` (streamed there, never held in memory; the caller
    /// checked its type and size): the file is hashed in pieces, synced and renamed into place, so `path` is
    /// gone afterwards whatever happens (renamed, or removed when the same file is kept already or on failure).
    public func saveFile(at path: String, type: String, threadID: String, uploaderID: String, now: Int64) throws -> Saved {
        let (id, count) = try keepFile(at: path)
        try engine.write({ db in
            try db.execute("""
                INSERT INTO attachment (id, threadId, uploaderId, type, bytes, createdAt) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (id, threadId) DO NOTHING
                """, [id, threadID, uploaderID, type, count, now])
        }, afterCommit: { _ in })
        return Saved(id: id, type: type, bytes: count)
    }

    /// `keep`, for a file already on disk at `path` (moved under its digest, or removed if that is kept
    /// already): its id and size.
    public func keepFile(at path: String) throws -> (id: String, bytes: Int) {
        var moved = false
        defer { if !moved { unlink(path) } }
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw AttachmentStoreError.io("open", errno) }
        let hasher = SHA256Stream()
        var count = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n == 0 { break }
            guard n > 0 else {
                let error = errno
                close(fd)
                throw AttachmentStoreError.io("read", error)
            }
            chunk.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            count += n
        }
        // Synced before the rename, as `writeDurably` does: a crash leaves no file or the whole one.
        let synced = fsync(fd) == 0
        let syncError = errno
        close(fd)
        guard synced else { throw AttachmentStoreError.io("fsync", syncError) }
        let id = Digest.hex(hasher.finish())
        try Self.makeDirectory(directory)
        let target = directory + "/" + id
        if access(target, F_OK) != 0 {
            guard rename(path, target) == 0 else { throw AttachmentStoreError.io("rename", errno) }
            moved = true
        }
        return (id, count)
    }

    /// The contents of the file kept under `id` (a SHA-256 in hex), or nil if there is none. The caller checks
    /// who may read it.
    public func contents(id: String) throws -> [UInt8]? {
        guard Self.isDigest(id), access(directory + "/" + id, F_OK) == 0 else { return nil }
        return try Self.readFile(directory + "/" + id)
    }

    static func isDigest(_ id: String) -> Bool {
        id.utf8.count == 64 && id.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// The attachment `id` of `threadID` with its contents, or nil if the thread has no such attachment.
    public func read(id: String, threadID: String) throws -> (type: String, contents: [UInt8])? {
        guard Self.isDigest(id) else { return nil }
        guard let type: String = try engine.read({ db in
            try db.fetchValue("SELECT type FROM attachment WHERE id = ? AND threadId = ?", [id, threadID])
        }) else { return nil }
        return (type, try Self.readFile(directory + "/" + id))
    }

    /// The attachments `ids` of `threadID` as (id, type, bytes), in the order asked; nil if one is not the
    /// thread's.
    public func find(ids: [String], threadID: String) throws -> [(id: String, type: String, bytes: Int)]? {
        try engine.read { db in
            var found: [(id: String, type: String, bytes: Int)] = []
            for id in ids {
                guard let row = try db.fetchOne("SELECT type, bytes FROM attachment WHERE id = ? AND threadId = ?",
                                                [id, threadID]) else { return nil }
                found.append((id, row["type"], row["bytes"]))
            }
            return found
        }
    }

    // MARK: - The purge

    /// Removes every kept file that no thread's `attachment` row and no user's avatar names any longer (a deleted
    /// message's, an erased account's, a replaced avatar's), with its thumbnail, and returns how many files. A file modified less than `graceSeconds` ago stays:
    /// an upload renames its file into place a moment before its row is committed (in this process or another of a
    /// cluster sharing the folder).
    public func removeUnnamedFiles(graceSeconds: Int64 = 2) throws -> Int {
        guard let directory = opendir(directory) else {
            if errno == ENOENT { return 0 }
            throw AttachmentStoreError.io("opendir", errno)
        }
        let now = SystemClock().now  // the system clock, which wrote the files' times, not the server's test clock
        // Each file with the digest it belongs to: an original's is its name, a thumbnail's its original's.
        var names: [(name: String, digest: String)] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let digest = Self.owningDigest(name) { names.append((name, digest)) }
        }
        closedir(directory)
        guard !names.isEmpty else { return 0 }
        let named: Set<String> = try engine.read { db in
            var ids = Set<String>(try db.fetchValues("SELECT DISTINCT id FROM attachment"))
            ids.formUnion(try db.fetchValues(#"SELECT avatar FROM "user" WHERE avatar IS NOT NULL"#) as [String])
            return ids
        }
        var removed = 0
        for (name, digest) in names where !named.contains(digest) {
            let path = self.directory + "/" + name
            var info = stat()
            // Compared without subtracting the file's time (any number a file system holds).
            guard stat(path, &info) == 0, Int64(info.st_mtim.tv_sec) <= now - graceSeconds else { continue }
            if unlink(path) == 0 { removed += 1 }
        }
        return removed
    }

    // MARK: - Files

    static func makeDirectory(_ path: String) throws {
        guard mkdir(path, 0o750) == 0 || errno == EEXIST else { throw AttachmentStoreError.io("mkdir", errno) }
    }

    /// Writes to a temporary name, syncs, then renames: a crash leaves either no file or the whole file.
    static func writeDurably(_ bytes: [UInt8], to path: String) throws {
        let temporary = path + ".partial-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o640)
        guard fd >= 0 else { throw AttachmentStoreError.io("open", errno) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            guard n > 0 else {
                let error = errno
                close(fd)
                unlink(temporary)
                throw AttachmentStoreError.io("write", error)
            }
            written += n
        }
        guard fsync(fd) == 0 else {
            let error = errno
            close(fd)
            unlink(temporary)
            throw AttachmentStoreError.io("fsync", error)
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let error = errno
            unlink(temporary)
            throw AttachmentStoreError.io("rename", error)
        }
    }

    static func readFile(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw AttachmentStoreError.io("open", errno) }
        defer { close(fd) }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n == 0 { return contents }
            guard n > 0 else { throw AttachmentStoreError.io("read", errno) }
            contents.append(contentsOf: chunk[0..<n])
        }
    }
}

public enum AttachmentStoreError: Error, Sendable, Equatable {
    /// A file operation failed (the call and errno).
    case io(String, Int32)
}

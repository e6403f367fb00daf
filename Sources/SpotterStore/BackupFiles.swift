#if canImport(Glibc)
import Glibc
#endif

/// The file side of a backup: copies through a temporary name, fsynced, then renamed, so a file in the copy is
/// either whole or absent. Blocking; the backup command runs in a process of its own.
enum BackupFiles {
    /// The entries of `path` (without `.` and `..`), or nil if it cannot be read.
    static func names(in path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Whether `name` is one the attachment store keeps: a SHA-256 digest (64 lowercase hex digits), or one
    /// followed by `.thumbnail`. Partial writes and the uploads' folder are not part of a backup.
    static func isKeptAttachment(_ name: String) -> Bool {
        let digest = name.hasSuffix(".thumbnail") ? String(name.dropLast(".thumbnail".count)) : name
        return digest.utf8.count == 64 && digest.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// Copies every kept attachment of `source` (absent: none) into `destination`; returns files and bytes.
    /// A file gone between listing and copying (purged meanwhile) is skipped.
    static func copyAttachments(from source: String, to destination: String) throws -> (Int, Int64) {
        guard let names = names(in: source) else {
            if errno == ENOENT { return (0, 0) }
            throw BackupError.io("reading \(source)", errno)
        }
        var files = 0
        var bytes: Int64 = 0
        for name in names.sorted() where isKeptAttachment(name) {
            guard let copied = try copy(source + "/" + name, to: destination + "/" + name, mode: 0o640, optional: true) else { continue }
            files += 1
            bytes += copied
        }
        return (files, bytes)
    }

    /// Copies one regular file (through `<destination>.tmp`, fsynced, renamed); nil when `optional` and it is absent.
    @discardableResult
    static func copy(_ source: String, to destination: String, mode: mode_t, optional: Bool) throws -> Int64? {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            if optional && errno == ENOENT { return nil }
            throw BackupError.io("opening \(source)", errno)
        }
        defer { close(input) }
        var info = stat()
        guard fstat(input, &info) == 0 else { throw BackupError.io("stat \(source)", errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let temporary = destination + ".tmp"
        let output = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard output >= 0 else { throw BackupError.io("creating \(temporary)", errno) }
        var total: Int64 = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        do {
            while true {
                let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else { throw BackupError.io("reading \(source)", errno) }
                if count == 0 { break }
                var offset = 0
                while offset < count {
                    let wrote = buffer.withUnsafeBytes { write(output, $0.baseAddress! + offset, count - offset) }
                    if wrote < 0 && errno == EINTR { continue }
                    guard wrote > 0 else { throw BackupError.io("writing \(temporary)", errno) }
                    offset += wrote
                }
                total += Int64(count)
            }
            guard fsync(output) == 0 else { throw BackupError.io("fsync \(temporary)", errno) }
        } catch {
            close(output)
            unlink(temporary)
            throw error
        }
        close(output)
        guard rename(temporary, destination) == 0 else { throw BackupError.io("rename \(temporary)", errno) }
        return total
    }

    static func makeDirectory(_ path: String, mode: mode_t) throws {
        guard mkdir(path, mode) == 0 else { throw BackupError.io("mkdir \(path)", errno) }
    }

    static func syncFile(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BackupError.io("opening \(path)", errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw BackupError.io("fsync \(path)", errno) }
    }

    /// Makes the names in a directory durable (a rename is on disk once its directory is synced).
    static func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw BackupError.io("opening \(path)", errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw BackupError.io("fsync \(path)", errno) }
    }

    static func size(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }
}

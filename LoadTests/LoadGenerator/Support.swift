import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

import LoadSupport

/// Progress to stderr.
func progress(_ text: String) {
    var line = "[spotter-load] " + text + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

struct LoadError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Writes `text` to `path` (whole file).
func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { throw LoadError("cannot write \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard written == bytes.count else { throw LoadError("short write to \(path)") }
}

/// Unix time in seconds (session starts are on the server's wall clock).
func unixNow() -> Int64 { Int64(time(nil)) }

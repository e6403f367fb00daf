import Glibc
import SpotterCore

// Files the server reads or tidies at start (start-up only: these block).
extension Server {
    /// Uploads a crash cut off leave their temporary files in `<attachments>/incoming`; they go at start
    /// (start-up only: it blocks). Only those untouched for `leftoverUploadSeconds`: on shared storage the folder is
    /// every process's, and another process may be receiving an upload into it right now (a body must arrive within
    /// `requestTimeoutSeconds`, so an hour-old file is nobody's).
    func removeLeftoverUploads() {
        let directory = incomingUploadsDirectory
        guard let folder = opendir(directory) else { return }
        defer { closedir(folder) }
        // The system clock, which wrote the files' times, not the server's (a test's) clock.
        let before = SystemClock().now - Self.leftoverUploadSeconds
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            var info = stat()
            guard name.hasPrefix("upload-"), stat(directory + "/" + name, &info) == 0, Int64(info.st_mtim.tv_sec) <= before else { continue }
            unlink(directory + "/" + name)
        }
    }

    static let leftoverUploadSeconds: Int64 = 3600
}

/// The bytes of the file at `path` (start-up only: it blocks).
func readWholeFile(_ path: String) throws -> [UInt8] {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { throw WebRootError.unreadable(path, errno) }
    defer { close(fd) }
    var contents: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n == 0 { return contents }
        guard n > 0 else { throw WebRootError.unreadable(path, errno) }
        contents.append(contentsOf: chunk[0..<n])
    }
}

enum WebRootError: Error, CustomStringConvertible {
    case unreadable(String, Int32)
    var description: String {
        switch self {
        case .unreadable(let path, let error): return "cannot read \(path): \(String(cString: strerror(error)))"
        }
    }
}

import Foundation
import SpotterCore
import TestSupport

/// `GET /v1/me/export` read the way a client must: the head, the chunked body to its last chunk, then the tar,
/// every header's checksum checked and every entry's SHA-256 compared with `manifest.json`.
struct ExportDownload {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    /// The sizes of the body's chunks, in order (empty for a response with a `Content-Length`).
    var chunkSizes: [Int] = []
    /// The archive's entries by name, in archive order.
    var names: [String] = []
    var files: [String: [UInt8]] = [:]
    /// What came after the response on the connection (the answer to a request pipelined behind it).
    var rest: [UInt8] = []

    func json(_ name: String) -> [String: Any] {
        files[name].flatMap { try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any] } ?? [:]
    }

    /// A `.jsonl` entry's lines, parsed.
    func lines(_ name: String) -> [[String: Any]] {
        (files[name] ?? []).split(separator: 10).compactMap { try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any] }
    }

    var errorCode: String? {
        ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]).flatMap { ($0["error"] as? [String: Any])?["code"] as? String }
    }

    /// Sends the request on `socket` (a new connection unless given) and reads the whole response (the server
    /// closes after it: `Connection: close`).
    static func fetch(port: Int, token: String?, method: String = "GET", socket given: BlockingSocket? = nil,
                      read: Bool = true) throws -> ExportDownload {
        let socket = try given ?? BlockingSocket(port: port, timeoutSeconds: 30)
        var head = "\(method) /v1/me/export HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        _ = socket.write(head + "\r\n")
        return try parse(socket.readToEnd())
    }

    static func parse(_ raw: [UInt8]) throws -> ExportDownload {
        guard let end = (0..<max(0, raw.count - 3)).first(where: { raw[$0] == 13 && raw[$0 + 1] == 10 && raw[$0 + 2] == 13 && raw[$0 + 3] == 10 })
        else { throw BlockingSocket.Failure(description: "no response head in \(raw.count) bytes") }
        var lines = String(decoding: raw[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines.removeFirst().split(separator: " ")[1])!
        var headers: [String: String] = [:]
        for line in lines {
            let parts = line.split(separator: ":", maxSplits: 1)
            headers[parts[0].lowercased()] = String(parts[1].drop { $0 == " " })
        }
        var download = ExportDownload(status: status, headers: headers, body: [])
        var at = end + 4
        if headers["transfer-encoding"] == "chunked" {
            while true {
                guard at < raw.count - 1, let lineEnd = (at..<(raw.count - 1)).first(where: { raw[$0] == 13 && raw[$0 + 1] == 10 }),
                      let size = Int(String(decoding: raw[at..<lineEnd], as: UTF8.self), radix: 16)
                else { throw BlockingSocket.Failure(description: "a chunk without its size line (the body was cut)") }
                at = lineEnd + 2
                if size == 0 {
                    guard raw.count >= at + 2, raw[at] == 13, raw[at + 1] == 10 else {
                        throw BlockingSocket.Failure(description: "the last chunk without its CRLF")
                    }
                    download.rest = Array(raw[(at + 2)...])
                    break
                }
                guard at + size + 2 <= raw.count else { throw BlockingSocket.Failure(description: "a chunk cut short") }
                download.body += raw[at..<(at + size)]
                download.chunkSizes.append(size)
                at += size + 2
            }
        } else {
            download.body = Array(raw[at...])
        }
        if status == 200 { try download.untar() }
        return download
    }

    /// Reads the ustar archive in `body`, checking each header's checksum, the padding and the end blocks.
    mutating func untar() throws {
        func field(_ block: ArraySlice<UInt8>, _ offset: Int, _ width: Int) -> String {
            let start = block.startIndex + offset
            return String(decoding: block[start..<(start + width)].prefix { $0 != 0 }, as: UTF8.self)
        }
        var at = 0
        while true {
            guard at + 512 <= body.count else { throw BlockingSocket.Failure(description: "the archive has no end blocks") }
            let block = body[at..<(at + 512)]
            if block.allSatisfy({ $0 == 0 }) {
                guard body.count == at + 1024, body[at...].allSatisfy({ $0 == 0 }) else {
                    throw BlockingSocket.Failure(description: "bytes after the end of the archive")
                }
                break
            }
            var summed = Array(block)
            for index in 148..<156 { summed[index] = 32 }
            guard Int(field(block, 148, 6), radix: 8) == summed.reduce(0, { $0 + Int($1) }), field(block, 257, 6) == "ustar" else {
                throw BlockingSocket.Failure(description: "a bad header at \(at)")
            }
            let prefix = field(block, 345, 155)
            let name = prefix.isEmpty ? field(block, 0, 100) : prefix + "/" + field(block, 0, 100)
            let size = Int(field(block, 124, 12), radix: 8)!
            at += 512
            files[name] = Array(body[at..<(at + size)])
            names.append(name)
            at += (size + 511) / 512 * 512
        }
        // The manifest lists every other entry with its size and digest.
        let listed = (json("manifest.json")["entries"] as? [[String: Any]]) ?? []
        guard listed.count == names.count - 1, names.last == "manifest.json" else {
            throw BlockingSocket.Failure(description: "the manifest lists \(listed.count) of \(names.count - 1) entries")
        }
        for entry in listed {
            let name = entry["name"] as? String ?? ""
            guard let bytes = files[name], entry["bytes"] as? Int == bytes.count,
                  entry["sha256"] as? String == Digest.hex(Digest.sha256(bytes)) else {
                throw BlockingSocket.Failure(description: "\(name) does not match its manifest entry")
            }
        }
    }

    /// Every message line of a thread, oldest first, across its pages.
    func messages(ofThread thread: String) -> [[String: Any]] {
        names.filter { $0.hasPrefix("threads/\(thread)/messages/") }
            .flatMap { lines($0) }
            .sorted { ($0["seq"] as? Int ?? 0) < ($1["seq"] as? Int ?? 0) }
    }

    /// Python's `tarfile`, strict, lists the same names (an independent reader), when there is a Python.
    func pythonNames() throws -> [String]? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { return nil }
        let path = NSTemporaryDirectory() + "export-\(UUID().uuidString).tar"
        try Data(body).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", "import sys, tarfile\nwith tarfile.open(sys.argv[1], format=tarfile.USTAR_FORMAT, errorlevel=2) as t:\n"
                                + "    print('\\n'.join(m.name for m in t.getmembers()))", path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return process.terminationStatus == 0 ? text.split(separator: "\n").map(String.init) : ["python failed"]
    }
}

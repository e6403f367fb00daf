import Foundation
import Testing
import TestSupport

/// Tests/scripts/jwks-server.py in a child process: a key set URL on 127.0.0.1 that counts its fetches.
final class KeySetEndpoint: @unchecked Sendable {
    let process = Process()
    let input = Pipe()
    let port: Int

    init(file: String, maxAge: Int) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", IdentityPython.scripts.appendingPathComponent("jwks-server.py").path, file, String(maxAge)]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else { throw CocoaError(.fileReadCorruptFile) }
        self.port = port
    }

    func fetches() throws -> Int {
        try APIClient(port: port).call("GET", "/count")["count"] as? Int ?? -1
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

/// Tests/scripts/id-token-check.py (PyJWT over `cryptography`), found as the push crypto interop tests find it.
/// Without the packages the test returns early with a message, except under `CI=true`, where it fails.
enum IdentityPython {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let scripts = root.appendingPathComponent("Tests/scripts")

    static let available: Bool = {
        if (try? run("probe", Data()))?.0 == 0 { return true }
        if ProcessInfo.processInfo.environment["CI"] == "true" { return true }
        print("⚠️  SKIPPED: PyJWT interop (Tests/scripts/id-token-check.py): python3 -m pip install --target .build/push-python PyJWT cryptography")
        return false
    }()

    static func run(_ mode: String, _ input: Data) throws -> (Int32, Data, String) {
        let environment = ProcessInfo.processInfo.environment
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [environment["SPOTTER_PUSH_PYTHON"] ?? "python3", scripts.appendingPathComponent("id-token-check.py").path, mode]
        var paths = [root.appendingPathComponent(".build/push-python").path]
        if let extra = environment["SPOTTER_PUSH_PYTHONPATH"] { paths.insert(extra, at: 0) }
        var child = environment
        child["PYTHONPATH"] = paths.joined(separator: ":")
        process.environment = child
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output, errors)
    }

    static func ask(_ mode: String, _ request: [String: Any]) throws -> [String: Any] {
        let (status, output, errors) = try run(mode, try JSONSerialization.data(withJSONObject: request))
        guard status == 0, let answer = try JSONSerialization.jsonObject(with: output) as? [String: Any] else {
            Issue.record("id-token-check.py \(mode) exited \(status): \(errors)")
            throw CocoaError(.fileReadCorruptFile)
        }
        return answer
    }
}

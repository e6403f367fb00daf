import Foundation
import SpotterTLS
import TestSupport
import WebSocket

/// Runs a program to its end; returns its status, standard output and standard error.
@discardableResult
func runTool(_ path: String, _ arguments: [String], input: String? = nil) throws -> (status: Int32, out: String, err: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let out = Pipe(), err = Pipe(), stdin = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = stdin
    try process.run()
    if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
    try stdin.fileHandleForWriting.close()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
}

/// A certificate authority made for one test with the openssl CLI, and the server certificates it signs
/// (for localhost and 127.0.0.1).
struct TestCA {
    let directory: String
    var caPath: String { directory + "/ca.pem" }

    init() throws {
        directory = NSTemporaryDirectory() + "spotter-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let made = try runTool("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", directory + "/ca.key", "-out", caPath, "-days", "2", "-subj", "/CN=Spotter Test CA",
        ])
        guard made.status == 0 else { throw BlockingSocket.Failure(description: "CA: \(made.err)") }
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(toFile: directory + "/ext.cnf", atomically: true, encoding: .utf8)
    }

    /// Issues a certificate named `name` with serial `serial` (hex) into `certPath`/`keyPath`.
    func issue(name: String, serial: String, certPath: String, keyPath: String) throws {
        let csr = directory + "/\(serial).csr"
        let request = try runTool("/usr/bin/openssl", [
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", keyPath, "-out", csr, "-subj", "/CN=\(name)",
        ])
        guard request.status == 0 else { throw BlockingSocket.Failure(description: "CSR: \(request.err)") }
        let signed = try runTool("/usr/bin/openssl", [
            "x509", "-req", "-in", csr, "-CA", caPath, "-CAkey", directory + "/ca.key", "-set_serial", "0x" + serial,
            "-days", "2", "-out", certPath, "-extfile", directory + "/ext.cnf",
        ])
        guard signed.status == 0 else { throw BlockingSocket.Failure(description: "sign: \(signed.err)") }
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

/// A blocking TLS client over a `BlockingSocket`, driven through a `TLSSession` (tests only).
final class TLSTestClient {
    let socket: BlockingSocket
    let session: TLSSession
    private var received: [UInt8] = []

    init(port: Int, context: TLSContext, serverName: String = "localhost", resuming: TLSSavedSession? = nil,
         receiveBufferBytes: Int32? = nil) throws {
        socket = try BlockingSocket(port: port, receiveBufferBytes: receiveBufferBytes)
        session = try TLSSession(context: context, serverName: serverName, resuming: resuming)
        try session.start()
        flush()
        while !session.isReady { try pump() }
    }

    private func flush() {
        let output = session.takeOutput()
        if !output.isEmpty { socket.write(output) }
    }

    /// Reads once from the socket through the session (throws at EOF).
    private func pump() throws {
        let bytes = try socket.read()
        guard !bytes.isEmpty else { throw BlockingSocket.Failure(description: "EOF") }
        _ = try bytes.withUnsafeBytes { try session.receive($0) { received += $0 } }
        flush()
    }

    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try session.send($0) }
        flush()
    }

    /// A masked text frame of `text`, encrypted and written (false once the server is gone).
    @discardableResult
    func sendText(_ text: String) throws -> Bool {
        let payload = Array(text.utf8)
        precondition(payload.count < 126)
        let mask: [UInt8] = [9, 8, 7, 6]
        var frame: [UInt8] = [0x81, 0x80 | UInt8(payload.count)] + mask
        for (index, byte) in payload.enumerated() { frame.append(byte ^ mask[index % 4]) }
        try frame.withUnsafeBytes { try session.send($0) }
        return socket.write(session.takeOutput())
    }

    /// Reads until `count` plaintext bytes have arrived; returns them.
    func read(count: Int) throws -> [UInt8] {
        while received.count < count { try pump() }
        let head = Array(received.prefix(count))
        received.removeFirst(count)
        return head
    }

    /// Reads until the plaintext contains `marker`; returns everything through it.
    func read(through marker: String) throws -> String {
        let needle = Array(marker.utf8)
        while true {
            if let range = find(needle) {
                let head = Array(received[..<range])
                received.removeFirst(range)
                return String(decoding: head, as: UTF8.self)
            }
            try pump()
        }
    }

    private func find(_ needle: [UInt8]) -> Int? {
        guard received.count >= needle.count else { return nil }
        for start in 0...(received.count - needle.count) where Array(received[start..<start + needle.count]) == needle {
            return start + needle.count
        }
        return nil
    }

    /// Upgrades to a WebSocket on `path` (wss://).
    func upgrade(path: String) throws {
        try write(Array("GET \(path) HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8))
        let head = try read(through: "\r\n\r\n")
        guard head.hasPrefix("HTTP/1.1 101") else { throw BlockingSocket.Failure(description: "no upgrade: \(head)") }
    }

    /// Sends a masked text frame and reads one unmasked frame back; returns its payload as text.
    func echo(_ text: String) throws -> String {
        let payload = Array(text.utf8)
        precondition(payload.count < 126)
        let mask: [UInt8] = [1, 2, 3, 4]
        var frame: [UInt8] = [0x81, 0x80 | UInt8(payload.count)] + mask
        for (index, byte) in payload.enumerated() { frame.append(byte ^ mask[index % 4]) }
        try write(frame)
        let header = try read(count: 2)
        let length = Int(header[1] & 0x7f)
        precondition(length < 126)
        return String(decoding: try read(count: length), as: UTF8.self)
    }
}

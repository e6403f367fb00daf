import Foundation
import Testing
import SpotterSMS
import TestSupport

/// A local fake SMS gateway: answers each HTTP request with `status` (and `Connection: close`) and keeps what it
/// received. Loopback only; stops with `close()`.
final class FakeGateway: @unchecked Sendable {
    struct Received {
        var requestLine: String
        var headers: [String: String]
        var body: [String: String]
    }

    let port: Int
    private let fd: Int32
    private let lock = NSLock()
    private var received: [Received] = []
    private let status: Int

    init(status: Int) throws {
        self.status = status
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        fd = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        guard bound == 0, listen(listener, 8) == 0 else { throw BlockingSocket.Failure(description: "fake gateway: bind/listen failed") }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else {
                    // Closed here, not in `close()`: a number freed while this thread still accepts on it could be
                    // the next gateway's listener, served with this one's status.
                    Glibc.close(listener)
                    return
                }
                serve(client)
            }
        }
    }

    var requests: [Received] { lock.withLock { received } }

    /// Stops accepting (the accepting thread then closes the listener).
    func close() { shutdown(fd, Int32(SHUT_RDWR)) }

    private func serve(_ client: Int32) {
        defer { Glibc.close(client) }
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var headEnd: Int?
        var wanted = Int.max
        while data.count < wanted {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            data += buffer[0..<count]
            if headEnd == nil, let end = data.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound {
                headEnd = end
                let head = String(decoding: data[0..<end], as: UTF8.self)
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                wanted = end + length
            }
        }
        guard let headEnd else { return }
        let lines = String(decoding: data[0..<headEnd], as: UTF8.self).split(separator: "\r\n").map(String.init)
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        let body = (try? JSONSerialization.jsonObject(with: Data(data[headEnd...]))) as? [String: String] ?? [:]
        lock.withLock { received.append(Received(requestLine: lines.first ?? "", headers: headers, body: body)) }
        let answer = "HTTP/1.1 \(status) X\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
        _ = answer.utf8CString.withUnsafeBufferPointer { write(client, $0.baseAddress, $0.count - 1) }
    }
}

/// The HTTP SMS sender against a local fake gateway: what it posts, and that a refusal or no gateway at all is an
/// error (so a code request answers `internal_error` and can be retried at once).
@Suite("SMS gateway sender", .serialized)
struct SMSGatewayTests {
    @Test func postsTheCodeWithTheToken() throws {
        let gateway = try FakeGateway(status: 200)
        defer { gateway.close() }
        let sender = HTTPOTPSender(url: URL(string: "http://127.0.0.1:\(gateway.port)/v1/sms")!, token: "gw-secret")
        try sender.send(code: "482913", to: "+966551234567")
        let request = try #require(gateway.requests.first)
        #expect(request.requestLine == "POST /v1/sms HTTP/1.1")
        #expect(request.headers["authorization"] == "Bearer gw-secret" && request.headers["content-type"] == "application/json")
        #expect(request.body["to"] == "+966551234567" && request.body["code"] == "482913")
        #expect(request.body["text"]?.contains("482913") == true && request.body["text"]?.contains("رمز") == true)
    }

    @Test func aRefusalOrNoGatewayIsAnError() throws {
        let refusing = try FakeGateway(status: 503)
        defer { refusing.close() }
        let sender = HTTPOTPSender(url: URL(string: "http://127.0.0.1:\(refusing.port)/sms")!, token: nil)
        #expect(throws: HTTPOTPSender.Failure.status(503)) { try sender.send(code: "111111", to: "+966500000000") }
        #expect(refusing.requests.first?.headers["authorization"] == nil)
        // A port nobody listens on (the gateway closed).
        let gone = try FakeGateway(status: 200)
        let port = gone.port
        gone.close()
        #expect(throws: HTTPOTPSender.Failure.self) {
            try HTTPOTPSender(url: URL(string: "http://127.0.0.1:\(port)/sms")!, token: nil, timeoutSeconds: 3).send(code: "1", to: "+1")
        }
    }

    @Test func aSignInCodeGoesThroughTheGateway() throws {
        let gateway = try FakeGateway(status: 200)
        defer { gateway.close() }
        let server = try TestServer(otpSender: HTTPOTPSender(url: URL(string: "http://127.0.0.1:\(gateway.port)/sms")!, token: "t"))
        defer { server.stop() }
        let api = APIClient(port: server.port)
        #expect(try api.call("POST", "/v1/auth/otp/request", ["phone": "0551234567"]).status == 202)
        let request = try #require(gateway.requests.last)
        #expect(request.body["to"] == "+966551234567")
        let code = try #require(request.body["code"])
        let signedIn = try api.call("POST", "/v1/auth/otp/verify", ["phone": "0551234567", "code": code])
        #expect(signedIn.status == 200 && signedIn.string("access_token") != nil)
    }

    @Test func aFailedSendAnswersAnErrorAndCanBeRetriedAtOnce() throws {
        let gateway = try FakeGateway(status: 500)
        defer { gateway.close() }
        let server = try TestServer(otpSender: HTTPOTPSender(url: URL(string: "http://127.0.0.1:\(gateway.port)/sms")!, token: nil))
        defer { server.stop() }
        let api = APIClient(port: server.port)
        let failed = try api.call("POST", "/v1/auth/otp/request", ["phone": "0551234567"])
        #expect(failed.status == 500 && failed.errorCode == "internal_error")
        // No resend wait started: the next request goes to the gateway again (and fails again here).
        #expect(try api.call("POST", "/v1/auth/otp/request", ["phone": "0551234567"]).errorCode == "internal_error")
        #expect(gateway.requests.count == 2)
    }
}

import SeededRandom
import Testing
@testable import WebSocket

/// `HTTPResponse.bytes` appends bytes (the 101 of every connect) instead of interpolating strings: the same
/// bytes as the interpolation it replaced, kept here as the reference.
@Suite("HTTPResponse bytes")
struct HTTPResponseBytesTests {
    static func reference(_ response: HTTPResponse, keepAlive: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(response.status) \(HTTPResponse.reasonPhrase(response.status))\r\n"
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        let bodyAllowed = !(100...199).contains(response.status) && response.status != 204 && response.status != 304
        if bodyAllowed { head += "Content-Length: \(response.body.count)\r\n" }
        if !keepAlive && response.status != 101 { head += "Connection: close\r\n" }
        head += "\r\n"
        var out = Array(head.utf8)
        if bodyAllowed { out.append(contentsOf: response.body) }
        return out
    }

    @Test("the same bytes as the interpolated head for random statuses, headers and bodies")
    func matchesInterpolation() {
        var random = SeededGenerator(seed: 0x101)
        let statuses = [101, 200, 204, 304, 400, 401, 426, 429, 500, 503, 0, -1, 999, Int.max, Int.min]
        let texts = ["", "Upgrade", "websocket", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", "é", "مرحبا", "a: b", "\t"]
        for _ in 0..<5_000 {
            let headers = (0..<Int.random(in: 0...4, using: &random)).map { _ in
                (name: texts.randomElement(using: &random)!, value: texts.randomElement(using: &random)!)
            }
            let body = (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let response = HTTPResponse(status: statuses.randomElement(using: &random)!, headers: headers, body: body)
            for keepAlive in [true, false] {
                #expect(response.bytes(keepAlive: keepAlive) == Self.reference(response, keepAlive: keepAlive))
            }
        }
        let accepted = Handshake.Accepted(acceptKey: "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", subprotocol: "spotter.v1").response
        #expect(String(decoding: accepted.bytes(), as: UTF8.self) == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: spotter.v1\r\n\r\n")
    }

    /// The request line as it was read before (split on spaces), as (method, target, minor version) or the error.
    static func referenceRequestLine(_ line: [UInt8]) -> Result<[String], HTTPError> {
        let parts = line.split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else { return .failure(HTTPError(400, "malformed request line")) }
        guard parts[0].allSatisfy(isTokenByte) else { return .failure(HTTPError(400, "invalid method")) }
        guard parts[1].allSatisfy({ $0 > 32 && $0 < 127 }) else { return .failure(HTTPError(400, "invalid request target")) }
        guard parts[1].first == UInt8(ascii: "/") || parts[1].elementsEqual([UInt8(ascii: "*")]) else {
            return .failure(HTTPError(400, "request target must be a path"))
        }
        let version = Array(parts[2])
        guard version.count == 8, version.starts(with: Array("HTTP/1.".utf8)), let last = version.last else {
            if version.starts(with: Array("HTTP/".utf8)) { return .failure(HTTPError(505, "only HTTP/1.x is supported")) }
            return .failure(HTTPError(400, "malformed HTTP version"))
        }
        guard last == UInt8(ascii: "0") || last == UInt8(ascii: "1") else {
            return .failure(HTTPError(505, "only HTTP/1.0 and HTTP/1.1 are supported"))
        }
        return .success([String(decoding: parts[0], as: UTF8.self), String(decoding: parts[1], as: UTF8.self), String(last - 48)])
    }

    @Test("request lines are read as splitting on spaces read them, over random lines")
    func requestLineMatchesSplit() {
        var random = SeededGenerator(seed: 0x11AE)
        let pieces = ["GET", "POST", " ", "  ", "/", "/v1/ws?access_token=abc", "*", "HTTP/1.1", "HTTP/1.0", "HTTP/2", "HTTP/1.2",
                      "é", "\t", "x", "G(T", ""]
        for _ in 0..<20_000 {
            let line = (0..<Int.random(in: 1...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            guard !line.isEmpty else { continue }
            let expected = Self.referenceRequestLine(Array(line.utf8))
            let got: Result<[String], HTTPError>
            do throws(HTTPError) {
                let requests = try parseAll(httpRequest([line, "Host: x"]))
                got = .success(requests.first.map { [$0.method, $0.target, String($0.versionMinor)] } ?? [])
            } catch {
                got = .failure(error)
            }
            #expect(got == expected, "\(line)")
        }
    }
}

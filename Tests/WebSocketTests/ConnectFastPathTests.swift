import Base64Codec
import SeededRandom
import Testing
@testable import WebSocket

/// The connect path's byte-level shortcuts (issue 33, connect ≥ 10,000/s) against the code they replaced, kept
/// here as the reference, over random inputs built from the characters that matter to each parser.
@Suite("Connect fast paths")
struct ConnectFastPathTests {
    /// What `queryParameter` did before: split the query on `&` (empty pairs dropped), compare the name, decode.
    static func referenceQueryParameter(_ request: HTTPRequest, _ name: String) -> String? {
        guard let query = request.query else { return nil }
        let utf8 = query.utf8
        for pair in utf8.split(separator: UInt8(ascii: "&")) {
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            guard utf8[pair.startIndex..<(equals ?? pair.endIndex)].elementsEqual(name.utf8) else { continue }
            guard let equals else { return "" }
            return referencePercentDecode(Array(query[utf8.index(after: equals)..<pair.endIndex].utf8))
        }
        return nil
    }

    static func referencePercentDecode(_ input: [UInt8]) -> String {
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        var iterator = input.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                if let high = iterator.next(), let low = iterator.next(), let h = hex(high), let l = hex(low) {
                    bytes.append(h << 4 | l)
                }
            default: bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// What `tokens(name).contains(token)` computes: split on commas, trim, Unicode-lower-case, drop empties.
    static func referenceHasToken(_ headers: HTTPHeaders, _ name: String, _ token: String) -> Bool {
        headers.fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
            .flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingHTTPWhitespace().lowercased() }
            .contains(token)
    }

    static func randomText(_ pieces: [String], maxCount: Int, _ random: inout SeededGenerator) -> String {
        (0..<Int.random(in: 0...maxCount, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
    }

    @Test("queryParameter finds the same value as splitting the query, over 20,000 random targets")
    func queryParameterMatchesSplit() {
        var random = SeededGenerator(seed: 0x5107_7E12)
        let pieces = ["a", "b", "ab", "=", "&", "&&", "%", "%2", "%20", "%4A", "%zz", "%e2%82%ac", "+", "é", "€", "?", "x", "", "مر"]
        let names = ["", "a", "b", "ab", "x", "é", "a=b", "access_token", "cursor", "%20", "+"]
        for _ in 0..<20_000 {
            let query = Self.randomText(pieces, maxCount: 12, &random)
            let path = Bool.random(using: &random) ? "/v1/ws" : "/p/é"
            let target = Int.random(in: 0..<10, using: &random) == 0 ? path : path + "?" + query
            let request = HTTPRequest(method: "GET", target: target, headers: HTTPHeaders())
            for name in names {
                #expect(request.queryParameter(name) == Self.referenceQueryParameter(request, name), "\(target) \(name)")
            }
        }
        let token = String(repeating: "eyJhbGciOiJIUzI1NiJ9.", count: 12)
        let long = HTTPRequest(method: "GET", target: "/v1/ws?access_token=\(token)&cursor=42&lang=ar", headers: HTTPHeaders())
        #expect(long.queryParameter("access_token") == token)
        #expect(long.queryParameter("cursor") == "42")
        #expect(long.queryParameter("lang") == "ar")
        #expect(long.queryParameter("access") == nil)
    }

    @Test("hasToken agrees with the token list, non-ASCII values and odd spacing included")
    func hasTokenMatchesTokens() {
        var random = SeededGenerator(seed: 0x70C3_2026)
        let pieces = ["upgrade", "Upgrade", "UPGRADE", "close", "keep-alive", "websocket", "WebSocket", ",", ", ", " ", "\t",
                      "x", "up", "grade", "\u{212A}eep-alive", "İ", "é", "websoc\u{212A}et"]
        let names = ["Connection", "Upgrade", "connection"]
        let tokens: [StaticString] = ["upgrade", "close", "keep-alive", "websocket"]
        for _ in 0..<20_000 {
            var fields: [(name: String, value: String)] = []
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                fields.append((["Connection", "UPGRADE", "Host", "connection"].randomElement(using: &random)!,
                               Self.randomText(pieces, maxCount: 6, &random)))
            }
            let headers = HTTPHeaders(fields)
            for name in names {
                for token in tokens {
                    #expect(headers.hasToken(name, token) == Self.referenceHasToken(headers, name, token.description),
                            "\(fields) \(name) \(token)")
                }
            }
        }
        #expect(HTTPHeaders([("Connection", "\u{212A}eep-alive")]).hasToken("Connection", "keep-alive"))
        #expect(!HTTPHeaders([("Connection", "keep-alive2")]).hasToken("Connection", "keep-alive"))
    }

    @Test("caseInsensitiveEquals compares ASCII letters without case and every other byte exactly")
    func caseInsensitive() {
        var random = SeededGenerator(seed: 0xCA5E)
        let pieces = ["a", "A", "z", "Z", "-", "é", "É", "[", "@", "`", "{", "\u{212A}", "k"]
        for _ in 0..<20_000 {
            let left = Self.randomText(pieces, maxCount: 5, &random), right = Self.randomText(pieces, maxCount: 5, &random)
            let lower: (UInt8) -> UInt8 = { (65...90).contains($0) ? $0 + 32 : $0 }
            let expected = left.utf8.map(lower) == right.utf8.map(lower)
            #expect(left.caseInsensitiveEquals(right) == expected, "\(left) \(right)")
            #expect(left.caseInsensitiveEquals(left.uppercased()) == (left.utf8.map(lower) == left.uppercased().utf8.map(lower)))
        }
    }

    @Test("base64 decoding of bytes in place agrees with decoding a copy, padded and not, over random text")
    func base64InPlace() {
        var random = SeededGenerator(seed: 0xB64)
        let pieces = ["A", "Q", "g", "w", "/", "+", "-", "_", "=", "==", "9", "é", " "]
        for _ in 0..<20_000 {
            let text = Self.randomText(pieces, maxCount: 30, &random)
            for alphabet in [Base64.Alphabet.standard, .url] {
                for padded in [false, true] {
                    let inPlace = Base64.decode(text, alphabet: alphabet, padded: padded)
                    let copied = Array(text.utf8).withUnsafeBufferPointer { Base64.decode(bytes: $0, alphabet: alphabet, padded: padded) }
                    #expect(inPlace == copied)
                    if let inPlace {
                        #expect(Base64.encode(inPlace, alphabet: alphabet, padded: padded) == text, "not canonical: \(text)")
                    }
                }
            }
        }
    }
}

extension ConnectFastPathTests {
    /// What `tokens` did before: every value split on commas, trimmed, lower-cased the Unicode way, empties dropped.
    static func referenceTokens(_ headers: HTTPHeaders, _ name: String) -> [String] {
        headers.values(name).flatMap { $0.split(separator: ",") }
            .map { $0.trimmingHTTPWhitespace().lowercased() }
            .filter { !$0.isEmpty }
    }

    @Test("tokens lists what splitting and lower-casing each value listed, ASCII on bytes and the rest the long way")
    func tokensMatchSplit() {
        var random = SeededGenerator(seed: 0x7043)
        let pieces = ["spotter.v1", "Spotter.V1", "chat", ",", ", ", " ", "\t", "x", "\u{212A}", "İ", "é", "ß", "ABC", ";q=1"]
        for _ in 0..<20_000 {
            var fields: [(name: String, value: String)] = []
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                fields.append((["Sec-WebSocket-Protocol", "sec-websocket-protocol", "Host"].randomElement(using: &random)!,
                               Self.randomText(pieces, maxCount: 6, &random)))
            }
            let headers = HTTPHeaders(fields)
            #expect(headers.tokens("Sec-WebSocket-Protocol") == Self.referenceTokens(headers, "Sec-WebSocket-Protocol"), "\(fields)")
        }
    }

    @Test("a request head split at every byte is found at the same place, and a bare LF anywhere is refused")
    func headEndAtEveryByte() throws {
        let head = httpRequest(["GET /v1/ws?access_token=abc HTTP/1.1", "Host: x", "Upgrade: websocket"])
        for cut in 0...head.count {
            var parser = HTTPRequestParser()
            parser.append(Array(head[..<cut]))
            let early = try parser.next()
            #expect((early != nil) == (cut == head.count))
            parser.append(Array(head[cut...]))
            #expect(try early ?? parser.next() != nil)
        }
        for at in head.indices where head[at] == 13 {
            var bare = head
            bare.remove(at: at)  // "\n" without its "\r"
            #expect(parseError(bare)?.status == 400, "CR at \(at) removed")
        }
    }
}

extension ConnectFastPathTests {
    @Test("an IPv4 address's text is its four decimal bytes joined by dots, for every byte value in every place")
    func ipv4Description() throws {
        var random = SeededGenerator(seed: 0x1D4)
        for round in 0..<20_000 {
            let bytes = round < 256 ? [UInt8(round), 0, 255, UInt8(255 - round)]
                : (0..<4).map { _ in UInt8.random(in: 0...255, using: &random) }
            let address = try #require(IPAddress(bytes: bytes))
            #expect(address.description == bytes.map(String.init).joined(separator: "."))
            #expect(IPAddress(address.description) == address)
        }
        let mapped = try #require(IPAddress("::ffff:192.0.2.1"))
        #expect(mapped.description == "192.0.2.1")
        #expect(IPAddress("2001:db8::1")?.description == "2001:db8::1")
    }

    @Test("the handshake's SHA-1 with the algorithm fetched once gives RFC 6455's accept key and FIPS 180's digests")
    func sha1Fetched() {
        #expect(Handshake.sha1Algorithm != nil)
        #expect(Handshake.acceptKey(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(Handshake.sha1(Array("abc".utf8)) == [0xa9, 0x99, 0x3e, 0x36, 0x47, 0x06, 0x81, 0x6a, 0xba, 0x3e, 0x25, 0x71,
                                                      0x78, 0x50, 0xc2, 0x6c, 0x9c, 0xd0, 0xd8, 0x9d])
        #expect(Handshake.sha1([]) == [0xda, 0x39, 0xa3, 0xee, 0x5e, 0x6b, 0x4b, 0x0d, 0x32, 0x55, 0xbf, 0xef,
                                       0x95, 0x60, 0x18, 0x90, 0xaf, 0xd8, 0x07, 0x09])
    }
}

import Testing
@testable import WebSocket

/// Addresses, CIDR blocks, PROXY v2 headers and X-Forwarded-For, without a socket.
struct IPAddressTests {
    @Test func parsesBothFamiliesAndPrintsThemCanonically() {
        #expect(IPAddress("192.0.2.1")?.bytes == [192, 0, 2, 1])
        #expect(IPAddress("0.0.0.0")?.description == "0.0.0.0")
        #expect(IPAddress("255.255.255.255")?.description == "255.255.255.255")
        #expect(IPAddress("2001:DB8:0:0::1")?.description == "2001:db8::1")
        #expect(IPAddress("[::1]")?.description == "::1")
        #expect(IPAddress("::")?.bytes == [UInt8](repeating: 0, count: 16))
    }

    @Test func readsV4MappedV6AsIPv4() {
        #expect(IPAddress("::ffff:10.1.2.3") == IPAddress("10.1.2.3"))
        #expect(IPAddress("::ffff:10.1.2.3")?.description == "10.1.2.3")
        #expect(IPAddress(bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 127, 0, 0, 1])?.description == "127.0.0.1")
        // ::ffff:0:a.b.c.d (SIIT) and ::a.b.c.d (deprecated compatible form) stay IPv6.
        #expect(IPAddress("::10.1.2.3")?.isIPv4 == false)
    }

    @Test func refusesGarbage() {
        for text in ["", " ", "1.2.3", "1.2.3.4.5", "256.0.0.1", "1.2.3.4 ", " 1.2.3.4", "01.2.3.4", "1.2.3.4:80",
                     "example.com", "::1%eth0", "[::1", "::1]", "[1.2.3.4]", "1:2:3:4:5:6:7:8:9", "1::2::3", "\u{0}",
                     "1.2.3.4\r\n", "-1.2.3.4", "1.2.3.4/32", String(repeating: "1", count: 10_000), "١.٢.٣.٤"] {
            #expect(IPAddress(text) == nil, "\(text.debugDescription)")
        }
        #expect(IPAddress(bytes: [1, 2, 3]) == nil)
        #expect(IPAddress(bytes: []) == nil)
    }
}

struct AddressRangeTests {
    private func range(_ text: String) -> AddressRange? { try? AddressRange(parsing: text) }

    @Test func matchesInsideItsPrefixOnly() throws {
        let block = try AddressRange(parsing: "10.0.0.0/8")
        #expect(block.contains(IPAddress("10.255.255.255")!))
        #expect(!block.contains(IPAddress("11.0.0.0")!))
        #expect(block.contains(IPAddress("::ffff:10.0.0.9")!))  // a dual-stack peer
        #expect(!block.contains(IPAddress("::a00:1")!))  // an IPv6 address is not in an IPv4 block
        let odd = try AddressRange(parsing: "192.168.4.0/22")
        #expect(odd.contains(IPAddress("192.168.7.255")!))
        #expect(!odd.contains(IPAddress("192.168.8.0")!))
    }

    @Test func theEdgesOfPrefixLength() throws {
        let everyV4 = try AddressRange(parsing: "0.0.0.0/0")
        #expect(everyV4.contains(IPAddress("255.255.255.255")!) && everyV4.contains(IPAddress("0.0.0.0")!))
        #expect(!everyV4.contains(IPAddress("::1")!))
        let everyV6 = try AddressRange(parsing: "::/0")
        #expect(everyV6.contains(IPAddress("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")!))
        #expect(!everyV6.contains(IPAddress("1.2.3.4")!))
        let one = try AddressRange(parsing: "127.0.0.1/32")
        #expect(one.contains(IPAddress("127.0.0.1")!) && !one.contains(IPAddress("127.0.0.2")!))
        #expect(try AddressRange(parsing: "127.0.0.1") == one)  // a bare address is a block of one
        let one6 = try AddressRange(parsing: "2001:db8::1/128")
        #expect(one6.contains(IPAddress("2001:db8::1")!) && !one6.contains(IPAddress("2001:db8::2")!))
        let mapped = try AddressRange(parsing: "::ffff:10.0.0.0/104")  // the mapped form's prefix counts 96 more
        #expect(mapped == (try AddressRange(parsing: "10.0.0.0/8")))
        #expect(try AddressRange(parsing: "2001:db8::/32").description == "2001:db8::/32")
    }

    @Test func refusesBadBlocksWithAReason() {
        #expect(throws: AddressRange.ParseError.badPrefix("10.0.0.0/33")) { try AddressRange(parsing: "10.0.0.0/33") }
        #expect(throws: AddressRange.ParseError.badPrefix("::/129")) { try AddressRange(parsing: "::/129") }
        #expect(throws: AddressRange.ParseError.hostBitsSet("10.0.0.1/8", suggestion: "10.0.0.0/8")) {
            try AddressRange(parsing: "10.0.0.1/8")
        }
        for text in ["", "/8", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0.0/8/8", "10.0.0.0/0x8",
                     "10.0.0.0/9999999999999999999999", "10.0.0.0 /8", "localhost/8", "::ffff:10.0.0.0/95"] {
            #expect(range(text) == nil, "\(text.debugDescription)")
        }
        let long = String(repeating: "9", count: 100_000)
        #expect(throws: AddressRange.ParseError.self) { try AddressRange(parsing: long) }
        #expect("\(AddressRange.ParseError.hostBitsSet("10.0.0.1/8", suggestion: "10.0.0.0/8"))".contains("did you mean 10.0.0.0/8"))
    }
}

struct ProxyHeaderTests {
    private let client = IPAddress("203.0.113.7")!

    @Test func readsAnIPv4HeaderAndLeavesWhatFollows() {
        let header = ProxyHeader.encode(source: client, port: 51000)
        #expect(header.count == 28)
        #expect(ProxyHeader.parse(header + Array("GET / HTTP/1.1\r\n".utf8)) == .header(source: client, length: 28))
    }

    @Test func readsIPv6AndMappedSources() {
        let six = IPAddress("2001:db8::7")!
        let header = ProxyHeader.encode(source: six)
        #expect(header.count == 52)
        #expect(ProxyHeader.parse(header) == .header(source: six, length: 52))
        var mapped = ProxyHeader.encode(source: IPAddress("::1")!)
        mapped.replaceSubrange(16..<32, with: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 198, 51, 100, 1])
        #expect(ProxyHeader.parse(mapped) == .header(source: IPAddress("198.51.100.1"), length: 52))
    }

    @Test func skipsTLVsAndTakesLocalAsNoAddress() {
        let tlvs: [UInt8] = [0x04, 0x00, 0x03, 1, 2, 3, 0x20, 0x00, 0x00]  // NOOP (3 bytes), SSL (empty)
        let header = ProxyHeader.encode(source: client, extra: tlvs)
        #expect(ProxyHeader.parse(header) == .header(source: client, length: 28 + tlvs.count))
        #expect(ProxyHeader.parse(ProxyHeader.encode(source: client, local: true)) == .header(source: nil, length: 28))
        // LOCAL with no address block at all (HAProxy's health checks).
        #expect(ProxyHeader.parse(ProxyHeader.signature + [0x20, 0x00, 0, 0]) == .header(source: nil, length: 16))
        // PROXY over UNSPEC or UNIX: nothing to take.
        #expect(ProxyHeader.parse(ProxyHeader.signature + [0x21, 0x00, 0, 0]) == .header(source: nil, length: 16))
        let unix = ProxyHeader.signature + [0x21, 0x31, 0, 216] + [UInt8](repeating: 0x2F, count: 216)
        #expect(ProxyHeader.parse(unix) == .header(source: nil, length: 232))
    }

    @Test func waitsForEveryPrefixOfAHeader() {
        let header = ProxyHeader.encode(source: IPAddress("2001:db8::7")!, extra: [0x04, 0, 1, 0])
        for count in 0..<header.count {
            #expect(ProxyHeader.parse(header.prefix(count)) == .needMore, "\(count) bytes")
        }
        #expect(ProxyHeader.parse(header) != .needMore)
    }

    @Test func tellsAnHTTPRequestFromAHeaderAtTheFirstDifferentByte() {
        #expect(ProxyHeader.parse(Array("GET / HTTP/1.1\r\n".utf8)) == .absent)
        #expect(ProxyHeader.parse(Array("\r\n\r\nGET".utf8)) == .absent)
        #expect(ProxyHeader.parse(Array("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n".utf8)) == .absent)  // version 1 is not read
        var wrong = ProxyHeader.encode(source: client)
        wrong[11] = 0x0B
        #expect(ProxyHeader.parse(wrong) == .absent)
    }

    @Test func refusesMalformedHeaders() {
        func with(_ byte: Int, _ value: UInt8) -> [UInt8] {
            var header = ProxyHeader.encode(source: client)
            header[byte] = value
            return header
        }
        let cases: [(String, [UInt8])] = [
            ("version 1", with(12, 0x11)), ("version 3", with(12, 0x31)), ("command 2", with(12, 0x22)),
            ("family 4", with(13, 0x41)), ("transport 3", with(13, 0x13)), ("datagram", with(13, 0x12)),
            ("short v4 block", ProxyHeader.signature + [0x21, 0x11, 0, 11] + [UInt8](repeating: 1, count: 11)),
            ("v6 family, v4-sized block", ProxyHeader.signature + [0x21, 0x21, 0, 12] + [UInt8](repeating: 1, count: 12)),
            ("length over the bound", ProxyHeader.signature + [0x21, 0x11, 0x04, 0x01]),
            ("largest length", ProxyHeader.signature + [0x21, 0x11, 0xFF, 0xFF]),
        ]
        for (name, bytes) in cases {
            guard case .malformed = ProxyHeader.parse(bytes) else {
                Issue.record("\(name): \(ProxyHeader.parse(bytes))")
                continue
            }
        }
        // The bound itself is allowed.
        let atBound = ProxyHeader.signature + [0x21, 0x11, 0x04, 0x00] + [UInt8](repeating: 0, count: 1024)
        #expect(ProxyHeader.parse(atBound) == .header(source: IPAddress("0.0.0.0"), length: 1040))
    }

    @Test func hugeInputIsReadOnlyAsFarAsOneHeader() {
        let header = ProxyHeader.encode(source: client)
        #expect(ProxyHeader.parse(header + [UInt8](repeating: 0, count: 1 << 20)) == .header(source: client, length: 28))
        #expect(ProxyHeader.parse([UInt8](repeating: 0x0D, count: 1 << 20)) == .absent)
    }
}

struct ForwardedForTests {
    private let proxies = TrustedProxies([try! AddressRange(parsing: "10.0.0.0/8"), try! AddressRange(parsing: "fd00::/8")])

    @Test func takesTheRightmostUntrustedEntry() {
        #expect(ForwardedFor.client(["198.51.100.9"], trusted: proxies)?.description == "198.51.100.9")
        // The client wrote 1.1.1.1 itself; the proxy appended the address it saw.
        #expect(ForwardedFor.client(["1.1.1.1, 198.51.100.9"], trusted: proxies)?.description == "198.51.100.9")
        // Through two of our own proxies.
        #expect(ForwardedFor.client(["1.1.1.1, 198.51.100.9, 10.0.0.2"], trusted: proxies)?.description == "198.51.100.9")
        #expect(ForwardedFor.client(["2001:db8::5, fd00::1"], trusted: proxies)?.description == "2001:db8::5")
        // Several fields are one list, in order.
        #expect(ForwardedFor.client(["1.1.1.1", "198.51.100.9,10.0.0.3"], trusted: proxies)?.description == "198.51.100.9")
        #expect(ForwardedFor.client(["::ffff:198.51.100.9"], trusted: proxies)?.description == "198.51.100.9")
    }

    @Test func skipsMalformedEntries() {
        #expect(ForwardedFor.client(["1.1.1.1, unknown, 10.0.0.2"], trusted: proxies)?.description == "1.1.1.1")
        #expect(ForwardedFor.client([" 198.51.100.9\t,, ,garbage\u{0}"], trusted: proxies)?.description == "198.51.100.9")
        #expect(ForwardedFor.client(["[2001:db8::5]"], trusted: proxies)?.description == "2001:db8::5")
        #expect(ForwardedFor.client([""], trusted: proxies) == nil)
        #expect(ForwardedFor.client(["garbage, 999.1.1.1, 1.2.3.4:80"], trusted: proxies) == nil)
        #expect(ForwardedFor.client([], trusted: proxies) == nil)
    }

    @Test func everyEntryTrustedGivesTheLeftmost() {
        #expect(ForwardedFor.client(["10.0.0.7, 10.0.0.2"], trusted: proxies)?.description == "10.0.0.7")
    }

    @Test func isBoundedInBytesAndEntries() {
        // A client pads the header; only its right end is read, and that is the proxy's entry.
        let padded = String(repeating: "1.1.1.1,", count: 100_000) + "198.51.100.9"
        #expect(ForwardedFor.client([padded], trusted: proxies)?.description == "198.51.100.9")
        // 40 trusted hops after the client: past the entry bound the last trusted one seen stands.
        let hops = ["198.51.100.9"] + Array(repeating: "10.0.0.1", count: 40)
        #expect(ForwardedFor.client([hops.joined(separator: ",")], trusted: proxies)?.description == "10.0.0.1")
        // One huge entry: cut, so malformed, so nothing.
        #expect(ForwardedFor.client([String(repeating: "9", count: 1 << 20)], trusted: proxies) == nil)
    }
}

import Foundation
import Base64Codec
import Testing
@testable import SpotterCore

@Suite("Crypto: Digest")
struct CryptoDigestTests {
    @Test("SHA-256 of the empty string (FIPS 180-2)")
    func sha256Empty() {
        #expect(CryptoFixtures.hex(Digest.sha256([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Digest.sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("SHA-256 of \"abc\" (FIPS 180-2)")
    func sha256ABC() {
        #expect(Digest.sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Digest.sha256(Array("abc".utf8)).count == 32)
    }

    @Test("sha256Hex hashes the UTF-8 bytes")
    func sha256HexUTF8() {
        let text = "رمز ١٢٣"
        #expect(Digest.sha256Hex(text) == CryptoFixtures.hex(Digest.sha256(Array(text.utf8))))
        #expect(Digest.sha256Hex(text) != Digest.sha256Hex("رمز 123"))
    }

    @Test("HMAC-SHA256, RFC 4231 test case 1")
    func hmacCase1() {
        let key = [UInt8](repeating: 0x0b, count: 20)
        let mac = Digest.hmacSHA256(key: key, message: Array("Hi There".utf8))
        #expect(CryptoFixtures.hex(mac) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }

    @Test("HMAC-SHA256, RFC 4231 test case 2")
    func hmacCase2() {
        let mac = Digest.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(CryptoFixtures.hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test("HMAC-SHA256, RFC 4231 test case 6 (key longer than a block)")
    func hmacCase6() {
        let key = [UInt8](repeating: 0xaa, count: 131)
        let message = Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)
        #expect(CryptoFixtures.hex(Digest.hmacSHA256(key: key, message: message))
            == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test("constantTimeEquals compares contents and lengths")
    func constantTimeEquals() {
        #expect(Digest.constantTimeEquals([], []))
        #expect(Digest.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!Digest.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!Digest.constantTimeEquals([0, 2, 3], [1, 2, 3]))
        #expect(!Digest.constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(!Digest.constantTimeEquals([], [0]))
    }

    @Test("base64 round-trips every length and rejects non-canonical input")
    func base64() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let url = Base64.encode(bytes, alphabet: .url)
            #expect(url == CryptoFixtures.base64URL(bytes))
            #expect(Base64.decode(url, alphabet: .url) == bytes)
            #expect(Base64.decode(Base64.encode(bytes, alphabet: .standard), alphabet: .standard) == bytes)
        }
        #expect(Base64.decode("AB==", alphabet: .url) == nil)      // padding
        #expect(Base64.decode("A", alphabet: .url) == nil)         // impossible length
        #expect(Base64.decode("AB", alphabet: .url) == nil)        // non-zero trailing bits
        #expect(Base64.decode("AA", alphabet: .url) == [0])
        #expect(Base64.decode("+/", alphabet: .url) == nil)        // wrong alphabet
        #expect(Base64.decode("-_", alphabet: .standard) == nil)
    }

    @Test("padded base64 (the handshake's) matches Foundation's encoder and rejects wrong padding")
    func base64Padded() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 53 &+ 7) }
            let padded = Base64.encode(bytes, alphabet: .standard, padded: true)
            #expect(padded == Data(bytes).base64EncodedString())
            #expect(Base64.decode(padded, alphabet: .standard, padded: true) == bytes)
        }
        #expect(Base64.decode("AA==", alphabet: .standard, padded: true) == [0])
        #expect(Base64.decode("AA", alphabet: .standard, padded: true) == nil)     // padding missing
        #expect(Base64.decode("AA=", alphabet: .standard, padded: true) == nil)    // padding short
        #expect(Base64.decode("AAA==", alphabet: .standard, padded: true) == nil)  // padding extra
        #expect(Base64.decode("AAAA==", alphabet: .standard, padded: true) == nil)
        #expect(Base64.decode("AB==", alphabet: .standard, padded: true) == nil)   // non-zero trailing bits
        #expect(Base64.decode("A===", alphabet: .standard, padded: true) == nil)
        #expect(Base64.decode("AA==", alphabet: .standard) == nil)                 // unpadded refuses padding
    }
}

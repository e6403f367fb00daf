import Testing
@testable import SpotterCore

@Suite("Crypto: SecureRandom")
struct CryptoRandomTests {
    @Test("bytes has the requested length and varies")
    func bytesLength() {
        for count in [0, 1, 16, 32, 1000] {
            #expect(SecureRandom.bytes(count).count == count)
        }
        #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
        // 1000 random bytes take (almost surely) well over 200 distinct values.
        #expect(Set(SecureRandom.bytes(1000)).count > 200)
    }

    @Test("six-digit codes are six ASCII digits with a roughly uniform first digit")
    func sixDigitCodes() {
        var firstDigitCounts = [Int](repeating: 0, count: 10)
        var distinct = Set<String>()
        for _ in 0..<10_000 {
            let code = SecureRandom.sixDigitCode()
            #expect(code.count == 6)
            #expect(code.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            firstDigitCounts[Int(code.utf8.first! - UInt8(ascii: "0"))] += 1
            distinct.insert(code)
        }
        // Expected 1000 each, standard deviation ≈ 30: 800…1200 is more than 6σ.
        for count in firstDigitCounts {
            #expect((800...1200).contains(count), "first-digit counts \(firstDigitCounts)")
        }
        #expect(distinct.count > 9_900)
    }

    @Test("tokens are 43 base64url characters carrying 32 bytes")
    func tokens() {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var seen = Set<String>()
        for _ in 0..<200 {
            let token = SecureRandom.token()
            #expect(token.count == 43)
            #expect(token.allSatisfy { alphabet.contains($0) })
            #expect(CryptoFixtures.fromBase64URL(token[...])?.count == 32)
            seen.insert(token)
        }
        #expect(seen.count == 200)
    }

    @Test("UUIDs are lower-case version 4, variant 10")
    func uuids() {
        var seen = Set<String>()
        for _ in 0..<500 {
            let uuid = SecureRandom.uuid()
            let characters = Array(uuid)
            #expect(characters.count == 36)
            for (offset, character) in characters.enumerated() {
                if [8, 13, 18, 23].contains(offset) {
                    #expect(character == "-")
                } else {
                    #expect("0123456789abcdef".contains(character), "\(uuid)")
                }
            }
            #expect(characters[14] == "4")
            #expect("89ab".contains(characters[19]))
            seen.insert(uuid)
        }
        #expect(seen.count == 500)
    }
}

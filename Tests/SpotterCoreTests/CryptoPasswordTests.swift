import Base64Codec
import Testing
@testable import SpotterCore

@Suite("Crypto: PasswordHasher")
struct CryptoPasswordTests {
    let fast = PasswordHasher(logN: 10, r: 8, p: 1)

    @Test("raw scrypt matches RFC 7914 §12 (password/NaCl, N=1024, r=8, p=16)")
    func rfc7914Vector() {
        let derived = PasswordHasher.scrypt(password: Array("password".utf8), salt: Array("NaCl".utf8),
                                            n: 1024, r: 8, p: 16, length: 64)
        #expect(derived.map(CryptoFixtures.hex) == """
            fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830da\
            c727afb94a83ee6d8360cbdfa2cc0640
            """)
    }

    @Test("hash has the documented encoding, and verify accepts the password")
    func roundTrip() throws {
        let encoded = fast.hash("correct horse")
        #expect(encoded.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
        try #require(parts.count == 5)
        #expect(CryptoFixtures.fromBase64(parts[3])?.count == 16)
        #expect(CryptoFixtures.fromBase64(parts[4])?.count == 32)
        // The stored hash is really scrypt(password, salt) with the stated parameters.
        let salt = try #require(CryptoFixtures.fromBase64(parts[3]))
        let expected = PasswordHasher.scrypt(password: Array("correct horse".utf8), salt: salt, n: 1024, r: 8, p: 1, length: 32)
        #expect(CryptoFixtures.fromBase64(parts[4]) == expected)
        #expect(fast.verify("correct horse", encoded: encoded))
        #expect(fast.verify("كلمة سر", encoded: fast.hash("كلمة سر")))
    }

    @Test("a wrong password is refused")
    func wrongPassword() {
        let encoded = fast.hash("correct horse")
        #expect(!fast.verify("correct hors", encoded: encoded))
        #expect(!fast.verify("Correct horse", encoded: encoded))
        #expect(!fast.verify("", encoded: encoded))
    }

    @Test("two hashes of one password differ (fresh salt) and both verify")
    func saltIsFresh() {
        let first = fast.hash("same")
        let second = fast.hash("same")
        #expect(first != second)
        #expect(fast.verify("same", encoded: first))
        #expect(fast.verify("same", encoded: second))
    }

    @Test("verify uses the encoding's parameters, not the hasher's")
    func parametersFromEncoding() {
        let encoded = fast.hash("pw123456")
        #expect(PasswordHasher(logN: 12, r: 4, p: 2).verify("pw123456", encoded: encoded))
        #expect(!PasswordHasher(logN: 12).needsRehash(PasswordHasher(logN: 12).hash("x")))
        #expect(PasswordHasher(logN: 12).needsRehash(encoded))
    }

    @Test("tampered encodings are refused")
    func tampered() throws {
        let encoded = fast.hash("secret-1")
        let other = fast.hash("secret-2")
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
        let otherParts = other.split(separator: "$", omittingEmptySubsequences: false)
        // Another hash's salt, or another hash's digest.
        #expect(!fast.verify("secret-1", encoded: "$scrypt$\(parts[2])$\(otherParts[3])$\(parts[4])"))
        #expect(!fast.verify("secret-1", encoded: "$scrypt$\(parts[2])$\(parts[3])$\(otherParts[4])"))
        // Different parameters.
        #expect(!fast.verify("secret-1", encoded: encoded.replacingFirst("ln=10", with: "ln=11")))
        #expect(!fast.verify("secret-1", encoded: encoded.replacingFirst("r=8", with: "r=7")))
        #expect(!fast.verify("secret-1", encoded: encoded.replacingFirst("p=1", with: "p=2")))
        // One flipped bit in the digest.
        var digest = try #require(CryptoFixtures.fromBase64(parts[4]))
        digest[0] ^= 1
        let flipped = "$scrypt$\(parts[2])$\(parts[3])$" + Base64.encode(digest, alphabet: .standard)
        #expect(!fast.verify("secret-1", encoded: flipped))
    }

    @Test("malformed encodings are refused", arguments: [
        "", "$", "$scrypt$", "scrypt$ln=10,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$bcrypt$ln=10,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=99,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=-1,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=0,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8,p=1$!!!!$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$",
        "$scrypt$ln=10,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA$extra",
    ])
    func malformed(encoded: String) {
        #expect(!fast.verify("password", encoded: encoded))
        #expect(PasswordHasher.parse(encoded) == nil)
    }

    @Test("the default cost (ln=15, about 32 MiB) hashes and verifies")
    func defaultCost() {
        let hasher = PasswordHasher()
        let encoded = hasher.hash("a real password")
        #expect(encoded.hasPrefix("$scrypt$ln=15,r=8,p=1$"))
        #expect(hasher.verify("a real password", encoded: encoded))
        #expect(!hasher.verify("a real passwort", encoded: encoded))
    }
}

private extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}

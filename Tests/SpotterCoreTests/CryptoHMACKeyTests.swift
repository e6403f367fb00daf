import Base64Codec
import Foundation
import SeededRandom
import Testing
@testable import SpotterCore

/// The connect path's token check (issue 33, connect ≥ 10,000/s): a keyed HMAC with its pads hashed once, and a
/// verification on the token's bytes, against OpenSSL's one-shot HMAC and the split-and-copy check they replaced.
@Suite("Crypto: HMACSHA256Key and the in-place token check")
struct CryptoHMACKeyTests {
    @Test("a kept key gives OpenSSL's one-shot HMAC for every key length 0…200 and random messages")
    func matchesOneShot() {
        var random = SeededGenerator(seed: 0x4D4C)
        for keyLength in 0...200 {
            let key = (0..<keyLength).map { _ in UInt8.random(in: 0...255, using: &random) }
            let kept = HMACSHA256Key(key)
            for _ in 0..<8 {
                let message = (0..<Int.random(in: 0...600, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                #expect(kept.mac(message) == Digest.hmacSHA256(key: key, message: message), "key \(keyLength) message \(message.count)")
            }
            #expect(kept.mac([]) == Digest.hmacSHA256(key: key, message: []))
        }
    }

    @Test("the same key MACs correctly from several threads at once")
    func concurrent() async {
        let key = HMACSHA256Key(Array("k".utf8) + [UInt8](repeating: 7, count: 40))
        let expected = Digest.hmacSHA256(key: Array("k".utf8) + [UInt8](repeating: 7, count: 40), message: Array("message".utf8))
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<500).allSatisfy { _ in key.mac(Array("message".utf8)) == expected } }
            }
            for await ok in group { #expect(ok) }
        }
    }

    /// The check before this change: split on dots, decode copies, one-shot HMAC.
    static func referenceVerify(_ token: String, secret: [UInt8], now: Int64) -> Result<AccessClaims, AccessTokenError> {
        let dots = token.utf8.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard dots.count == 3, token.utf8.count <= 8192 else { return .failure(.malformed) }
        let parts = dots.map { token[$0.startIndex..<$0.endIndex] }
        let headerOK: Bool
        if parts[0].utf8.elementsEqual(AccessTokenSigner.encodedHeader.utf8) {
            headerOK = true
        } else if let bytes = Base64.decode(String(parts[0]), alphabet: .url),
                  let header = try? JSONDecoder().decode(AccessTokenSigner.Header.self, from: Data(bytes)) {
            headerOK = header.alg == "HS256" && (header.typ == nil || header.typ == "JWT")
        } else {
            headerOK = false
        }
        guard headerOK, let payload = Base64.decode(String(parts[1]), alphabet: .url), !payload.isEmpty,
              let signature = Base64.decode(String(parts[2]), alphabet: .url), signature.count == 32
        else { return .failure(.malformed) }
        let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard Digest.hmacSHA256(key: secret, message: signingInput) == signature else { return .failure(.badSignature) }
        guard let claims = AccessClaims(flat: payload) ?? (try? JSONDecoder().decode(AccessClaims.self, from: Data(payload)))
        else { return .failure(.malformed) }
        return now < claims.expiresAt ? .success(claims) : .failure(.expired)
    }

    @Test("verify agrees with the split-and-copy check on mutated, truncated, re-signed and foreign tokens")
    func verifyMatchesReference() {
        var random = SeededGenerator(seed: 0x70_4E)
        let secret = (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }
        let signer = AccessTokenSigner(secret: secret)
        let other = AccessTokenSigner(secret: [UInt8](repeating: 1, count: 64))
        let alphabet = Array("ABCXYZabcxyz019-_.=+/é")
        var outcomes: [String: Int] = [:]
        for round in 0..<4_000 {
            let claims = AccessClaims(subject: "u\(round)", role: [.coach, .client, .admin].randomElement(using: &random)!,
                                      sessionID: "s\(round % 7)", issuedAt: Int64(round),
                                      expiresAt: [Int64.min, 0, 1_000, 2_000, Int64.max].randomElement(using: &random)!)
            var token = (round % 5 == 0 ? other : signer).sign(claims)
            switch round % 6 {
            case 1:  // one character changed
                var characters = Array(token)
                characters[Int.random(in: 0..<characters.count, using: &random)] = alphabet.randomElement(using: &random)!
                token = String(characters)
            case 2: token = String(token.prefix(Int.random(in: 0...token.count, using: &random)))
            case 3: token += [".", "..", "=", "A", "é"].randomElement(using: &random)!
            case 4:  // another header, correctly signed (HS256 untyped, or another algorithm)
                let header = Base64.encode(Array([#"{"alg":"HS256"}"#, #"{"alg":"none"}"#, #"{"typ":"JWT","alg":"HS256"}"#, "x"]
                    .randomElement(using: &random)!.utf8), alphabet: .url)
                let body = token.split(separator: ".")[1]
                let input = header + "." + body
                token = input + "." + Base64.encode(Digest.hmacSHA256(key: secret, message: Array(input.utf8)), alphabet: .url)
            default: break
            }
            let now = Int64.random(in: 500...2_500, using: &random)
            let fast: Result<AccessClaims, AccessTokenError>
            do { fast = .success(try signer.verify(token, now: now)) } catch { fast = .failure(error) }
            let slow = Self.referenceVerify(token, secret: secret, now: now)
            #expect(fast == slow, "\(token)")
            switch slow {
            case .success: outcomes["valid", default: 0] += 1
            case .failure(let error): outcomes["\(error)", default: 0] += 1
            }
        }
        // Every outcome was exercised: valid, malformed, bad signature, expired.
        #expect(outcomes.count == 4, "\(outcomes)")
        let huge = signer.sign(AccessClaims(subject: String(repeating: "u", count: 9000), role: .coach, sessionID: "s", issuedAt: 0, expiresAt: 9))
        #expect(throws: AccessTokenError.malformed) { try signer.verify(huge, now: 1) }
    }
}

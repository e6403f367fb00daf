import Foundation
import Testing
@testable import SpotterCore

@Suite("OTPChallenge")
struct RulesOTPTests {
    let issued: Int64 = 1_700_000_000

    @Test("constants match the seed: 5 minutes, 60 s resend, 5 attempts")
    func constants() {
        #expect(OTPChallenge.lifetimeSeconds == 300)
        #expect(OTPChallenge.resendAfterSeconds == 60)
        #expect(OTPChallenge.maxAttempts == 5)
    }

    @Test("resend wait counts down 60 → 1, then nil from 60 s on")
    func resendWait() {
        let challenge = OTPChallenge(codeDigest: "d", issuedAt: issued)
        for elapsed in Int64(0)..<60 {
            #expect(challenge.resendWait(now: issued + elapsed) == Int(60 - elapsed))
        }
        #expect(challenge.resendWait(now: issued + 60) == nil)
        #expect(challenge.resendWait(now: issued + 61) == nil)
        #expect(challenge.resendWait(now: issued + 10_000) == nil)
    }

    @Test("a clock that went backwards never asks for more than 60 s")
    func resendWaitClockSkew() {
        let challenge = OTPChallenge(codeDigest: "d", issuedAt: issued)
        #expect(challenge.resendWait(now: issued - 500) == 60)
    }

    @Test("the right code is accepted before expiry")
    func accepted() {
        var challenge = OTPChallenge(codeDigest: "abc123", issuedAt: issued)
        #expect(challenge.verify(candidateDigest: "abc123", now: issued) == .accepted)
        #expect(challenge.failedAttempts == 0)
        var late = OTPChallenge(codeDigest: "abc123", issuedAt: issued)
        #expect(late.verify(candidateDigest: "abc123", now: issued + 299) == .accepted)
    }

    @Test("expiry is at exactly 300 s and wins over everything")
    func expiry() {
        var challenge = OTPChallenge(codeDigest: "abc123", issuedAt: issued)
        #expect(challenge.verify(candidateDigest: "abc123", now: issued + 300) == .expired)
        #expect(challenge.verify(candidateDigest: "wrong", now: issued + 300) == .expired)
        #expect(challenge.failedAttempts == 0)
        var locked = OTPChallenge(codeDigest: "abc123", issuedAt: issued, failedAttempts: 5)
        #expect(locked.verify(candidateDigest: "abc123", now: issued + 301) == .expired)
    }

    @Test("wrong attempts count down 4…0, then every try is refused, even the right code")
    func attempts() {
        var challenge = OTPChallenge(codeDigest: "abc123", issuedAt: issued)
        for remaining in stride(from: 4, through: 0, by: -1) {
            #expect(challenge.verify(candidateDigest: "zzz999", now: issued + 10) == .wrong(remainingAttempts: remaining))
        }
        #expect(challenge.failedAttempts == 5)
        #expect(challenge.verify(candidateDigest: "abc123", now: issued + 11) == .tooManyAttempts)
        #expect(challenge.verify(candidateDigest: "zzz999", now: issued + 12) == .tooManyAttempts)
        #expect(challenge.failedAttempts == 5)
    }

    @Test("the right code after some wrong ones is still accepted")
    func acceptedAfterMistakes() {
        var challenge = OTPChallenge(codeDigest: "abc123", issuedAt: issued)
        _ = challenge.verify(candidateDigest: "x", now: issued)
        _ = challenge.verify(candidateDigest: "y", now: issued)
        #expect(challenge.verify(candidateDigest: "abc123", now: issued + 1) == .accepted)
        #expect(challenge.failedAttempts == 2)
    }

    @Test("digests of different length or a prefix do not match")
    func prefixes() {
        var challenge = OTPChallenge(codeDigest: "abc123", issuedAt: issued)
        #expect(challenge.verify(candidateDigest: "abc12", now: issued) == .wrong(remainingAttempts: 4))
        #expect(challenge.verify(candidateDigest: "abc1234", now: issued) == .wrong(remainingAttempts: 3))
        #expect(challenge.verify(candidateDigest: "", now: issued) == .wrong(remainingAttempts: 2))
        #expect(challenge.verify(candidateDigest: "ABC123", now: issued) == .wrong(remainingAttempts: 1))
    }

    @Test("constant-time equality agrees with ==")
    func constantTimeEquals() {
        let samples: [[UInt8]] = [[], [0], [1], [0, 1], [1, 0], [255, 255], Array("abc".utf8)]
        for a in samples {
            for b in samples {
                #expect(OTPChallenge.constantTimeEquals(a, b) == (a == b))
            }
        }
    }

    @Test("round-trips through Codable")
    func codable() throws {
        let challenge = OTPChallenge(codeDigest: "feed", issuedAt: issued, failedAttempts: 3)
        let data = try JSONEncoder().encode(challenge)
        #expect(try JSONDecoder().decode(OTPChallenge.self, from: data) == challenge)
    }
}

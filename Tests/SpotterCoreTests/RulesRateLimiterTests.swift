import Testing
@testable import SpotterCore

@Suite("RateLimiter")
struct RulesRateLimiterTests {
    @Test("allows `limit` attempts, then limits with the exact wait")
    func limit() {
        var limiter = RateLimiter(limit: 3, windowSeconds: 60)
        #expect(limiter.attempt("ip", now: 100) == .allowed)
        #expect(limiter.attempt("ip", now: 110) == .allowed)
        #expect(limiter.attempt("ip", now: 120) == .allowed)
        #expect(limiter.attempt("ip", now: 130) == .limited(retryAfterSeconds: 30))
        #expect(limiter.attempt("ip", now: 159) == .limited(retryAfterSeconds: 1))
    }

    @Test("the window slides: the oldest attempt frees a slot exactly at t + window")
    func sliding() {
        var limiter = RateLimiter(limit: 2, windowSeconds: 10)
        #expect(limiter.attempt("k", now: 0) == .allowed)
        #expect(limiter.attempt("k", now: 5) == .allowed)
        #expect(limiter.attempt("k", now: 9) == .limited(retryAfterSeconds: 1))
        #expect(limiter.attempt("k", now: 10) == .allowed)        // 0 expired
        #expect(limiter.attempt("k", now: 14) == .limited(retryAfterSeconds: 1))   // 5 and 10 live
        #expect(limiter.attempt("k", now: 15) == .allowed)        // 5 expired
        #expect(limiter.attempt("k", now: 16) == .limited(retryAfterSeconds: 4))   // 10 expires at 20
    }

    @Test("no burst at a window edge: never more than `limit` in any window")
    func noEdgeBurst() {
        var limiter = RateLimiter(limit: 5, windowSeconds: 60)
        var allowedTimes: [Int64] = []
        for now in Int64(0)..<600 where limiter.attempt("k", now: now) == .allowed {
            allowedTimes.append(now)
        }
        for (i, t) in allowedTimes.enumerated() {
            let inWindow = allowedTimes[i...].prefix { $0 < t + 60 }.count
            #expect(inWindow <= 5)
        }
        #expect(allowedTimes.count == 50)
    }

    @Test("retrying exactly after retryAfter succeeds")
    func retryAfterIsExact() {
        var limiter = RateLimiter(limit: 1, windowSeconds: 300)
        #expect(limiter.attempt("a", now: 1000) == .allowed)
        guard case .limited(let wait) = limiter.attempt("a", now: 1042) else {
            Issue.record("expected limited")
            return
        }
        #expect(wait == 258)
        #expect(limiter.attempt("a", now: 1042 + Int64(wait) - 1) == .limited(retryAfterSeconds: 1))
        #expect(limiter.attempt("a", now: 1042 + Int64(wait)) == .allowed)
    }

    @Test("refused attempts are not recorded")
    func refusedNotRecorded() {
        var limiter = RateLimiter(limit: 1, windowSeconds: 10)
        #expect(limiter.attempt("a", now: 0) == .allowed)
        for now in Int64(1)..<10 {
            #expect(limiter.attempt("a", now: now) == .limited(retryAfterSeconds: Int(10 - now)))
        }
        #expect(limiter.attempt("a", now: 10) == .allowed)
    }

    @Test("keys are independent")
    func keys() {
        var limiter = RateLimiter(limit: 1, windowSeconds: 60)
        #expect(limiter.attempt("a", now: 0) == .allowed)
        #expect(limiter.attempt("b", now: 0) == .allowed)
        #expect(limiter.attempt("a", now: 1) == .limited(retryAfterSeconds: 59))
        #expect(limiter.trackedKeys == 2)
    }

    @Test("check does not record")
    func checkDoesNotRecord() {
        var limiter = RateLimiter(limit: 2, windowSeconds: 60)
        for _ in 0..<10 { #expect(limiter.check("a", now: 0) == .allowed) }
        #expect(limiter.trackedKeys == 0)
        #expect(limiter.attempt("a", now: 0) == .allowed)
        #expect(limiter.check("a", now: 1) == .allowed)
        #expect(limiter.check("a", now: 1) == .allowed)
        #expect(limiter.attempt("a", now: 1) == .allowed)
        #expect(limiter.check("a", now: 2) == .limited(retryAfterSeconds: 58))
        #expect(limiter.check("a", now: 60) == .allowed)
    }

    @Test("reset forgets a key")
    func reset() {
        var limiter = RateLimiter(limit: 1, windowSeconds: 60)
        #expect(limiter.attempt("a", now: 0) == .allowed)
        #expect(limiter.attempt("b", now: 0) == .allowed)
        limiter.reset("a")
        #expect(limiter.trackedKeys == 1)
        #expect(limiter.attempt("a", now: 1) == .allowed)
        #expect(limiter.attempt("b", now: 1) == .limited(retryAfterSeconds: 59))
        limiter.reset("never-seen")
        #expect(limiter.trackedKeys == 2)
    }

    @Test("prune drops idle keys and bounds memory")
    func prune() {
        var limiter = RateLimiter(limit: 3, windowSeconds: 60)
        for i in 0..<10_000 {
            _ = limiter.attempt("ip-\(i)", now: Int64(i % 100))
        }
        #expect(limiter.trackedKeys == 10_000)
        limiter.prune(now: 100)    // attempts at 41…99 still live (t + 60 > 100)
        #expect(limiter.trackedKeys == 5_900)
        limiter.prune(now: 158)    // only attempts at 99 live
        #expect(limiter.trackedKeys == 100)
        limiter.prune(now: 159)
        #expect(limiter.trackedKeys == 0)
        #expect(limiter.attempt("ip-1", now: 160) == .allowed)
    }

    @Test("prune keeps live attempts counting")
    func pruneKeepsState() {
        var limiter = RateLimiter(limit: 2, windowSeconds: 60)
        _ = limiter.attempt("a", now: 0)
        _ = limiter.attempt("a", now: 30)
        limiter.prune(now: 45)
        #expect(limiter.trackedKeys == 1)
        #expect(limiter.attempt("a", now: 45) == .limited(retryAfterSeconds: 15))
    }

    @Test("a key stays bounded however many attempts it makes")
    func perKeyBound() {
        var limiter = RateLimiter(limit: 3, windowSeconds: 1_000_000)
        for now in Int64(0)..<10_000 { _ = limiter.attempt("flood", now: now) }
        // Only the first three were recorded, so the wait is measured from the first.
        #expect(limiter.check("flood", now: 10_000) == .limited(retryAfterSeconds: 990_000))
        #expect(limiter.trackedKeys == 1)
    }

    @Test("resetAll forgets every key")
    func resetAll() {
        var limiter = RateLimiter(limit: 1, windowSeconds: 60)
        #expect(limiter.attempt("a", now: 0) == .allowed)
        #expect(limiter.attempt("b", now: 0) == .allowed)
        #expect(limiter.attempt("a", now: 1) != .allowed)
        limiter.resetAll()
        #expect(limiter.trackedKeys == 0)
        #expect(limiter.attempt("a", now: 2) == .allowed)
    }

    @Test("at the ends of Int64 nothing overflows, and the rule for stored times is the limiter's own")
    func edgesOfTime() {
        var limiter = RateLimiter(limit: 1, windowSeconds: 900)
        #expect(limiter.attempt("max", now: .max - 1) == .allowed)
        #expect(limiter.attempt("max", now: .max) == .limited(retryAfterSeconds: 1))
        #expect(limiter.attempt("min", now: .min) == .allowed)
        #expect(limiter.attempt("min", now: .min + 899) == .limited(retryAfterSeconds: 1))
        #expect(limiter.attempt("min", now: .min + 900) == .allowed)
        var wide = RateLimiter(limit: 1, windowSeconds: .max)
        #expect(wide.attempt("k", now: 0) == .allowed)
        #expect(wide.attempt("k", now: .min) == .limited(retryAfterSeconds: Int.max))
        // `decision(after:)` (counters kept elsewhere): unordered times, expired ones, a limit below one.
        #expect(RateLimiter.decision(after: [30, 10, 20, -100], limit: 3, windowSeconds: 60, now: 40) == .limited(retryAfterSeconds: 30))
        #expect(RateLimiter.decision(after: [30, 10, 20], limit: 3, windowSeconds: 60, now: 70) == .allowed)
        #expect(RateLimiter.decision(after: [5], limit: 0, windowSeconds: 60, now: 6) == .limited(retryAfterSeconds: 59))
        #expect(RateLimiter.decision(after: [], limit: 1, windowSeconds: 1, now: .max) == .allowed)
    }
}

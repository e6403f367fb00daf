import Foundation
import Synchronization
import Testing
@testable import SpotterPostgres
import SpotterCore
import SpotterPorts
import TestSupport

/// The cluster's shared rate-limit counters (issue 31 item 5) on a real PostgreSQL: the same rule as the in-memory
/// `RateLimiter` (a sliding log), one count across every "process" (each `PostgresRateLimits` has connections of its
/// own, as each process does), at the window's edges and at the ends of `Int64`.
@Suite("PostgreSQL rate-limit counters", .serialized)
struct PostgresRateLimitTests {
    /// Two processes' counters on one fresh, migrated database.
    static func counters() throws -> (PostgresRateLimits, PostgresRateLimits) {
        let url = try PostgresCluster.shared().makeDatabase()
        try PostgresSchema.migrate(url: url)
        return (PostgresRateLimits(url: url), PostgresRateLimits(url: url))
    }

    @Test func attemptsOnTwoProcessesCountTogetherAndTheWindowEndsWhereTheInMemoryOneDoes() throws {
        let (a, b) = try Self.counters()
        var memory = RateLimiter(limit: 3, windowSeconds: 60)
        let key = "attempts|addr:192.0.2.1"
        // Three attempts at 1000, 1010 and 1020 over both processes; the fourth is refused until 1060.
        for (counter, now) in [(a, Int64(1000)), (b, 1010), (a, 1020)] {
            #expect(try counter.attempt(key, limit: 3, windowSeconds: 60, now: now) == .allowed)
            #expect(memory.attempt(key, now: now) == .allowed)
        }
        for (now, wait) in [(Int64(1020), 40), (1059, 1)] {
            #expect(try b.attempt(key, limit: 3, windowSeconds: 60, now: now) == .limited(retryAfterSeconds: wait))
            #expect(memory.attempt(key, now: now) == .limited(retryAfterSeconds: wait))
            #expect(try a.check(key, limit: 3, windowSeconds: 60, now: now) == .limited(retryAfterSeconds: wait))
        }
        // At 1060 the attempt of 1000 stops counting (its window is [1000, 1060)): one slot, not three.
        #expect(try b.attempt(key, limit: 3, windowSeconds: 60, now: 1060) == .allowed)
        #expect(try a.attempt(key, limit: 3, windowSeconds: 60, now: 1060) == .limited(retryAfterSeconds: 10))
        // Refused attempts were not counted: at 1070 the one of 1010 is gone and a slot is free.
        #expect(try a.attempt(key, limit: 3, windowSeconds: 60, now: 1070) == .allowed)
        // Another key, and a key differing in case, are counted apart.
        #expect(try a.attempt("attempts|addr:192.0.2.2", limit: 3, windowSeconds: 60, now: 1070) == .allowed)
        #expect(try a.attempt("ATTEMPTS|addr:192.0.2.1", limit: 3, windowSeconds: 60, now: 1070) == .allowed)
    }

    @Test func parallelAttemptsFromManyThreadsOnTwoProcessesAllowExactlyTheLimit() throws {
        let (a, b) = try Self.counters()
        let allowed = Mutex(0)
        let done = DispatchGroup()
        for index in 0..<24 {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                let counter = index.isMultiple(of: 2) ? a : b
                if (try? counter.attempt("failures|email:v@x.test", limit: 5, windowSeconds: 900, now: 5000)) == .allowed {
                    allowed.withLock { $0 += 1 }
                }
            }
        }
        done.wait()
        #expect(allowed.withLock { $0 } == 5)
    }

    @Test func refundResetExpireAndResetAll() throws {
        let (a, b) = try Self.counters()
        for _ in 0..<2 { _ = try a.attempt("k", limit: 2, windowSeconds: 100, now: 10) }
        #expect(try b.check("k", limit: 2, windowSeconds: 100, now: 10) == .limited(retryAfterSeconds: 100))
        try b.refund("k")
        #expect(try a.check("k", limit: 2, windowSeconds: 100, now: 10) == .allowed)
        try b.refund("k")
        try b.refund("k")  // never below none
        #expect(try a.attempt("k", limit: 1, windowSeconds: 100, now: 10) == .allowed)
        try a.reset("k")
        #expect(try a.check("k", limit: 1, windowSeconds: 100, now: 10) == .allowed)
        _ = try a.attempt("old", limit: 1, windowSeconds: 100, now: 10)
        _ = try a.attempt("new", limit: 1, windowSeconds: 100, now: 60)
        #expect(try b.expire(now: 109) == 0)
        #expect(try b.expire(now: 110) == 1, "the key whose last attempt stopped counting at 110 goes")
        #expect(try a.check("new", limit: 1, windowSeconds: 100, now: 110) == .limited(retryAfterSeconds: 50))
        try b.resetAll()
        #expect(try a.check("new", limit: 1, windowSeconds: 100, now: 110) == .allowed)
    }

    @Test func edgesOfTimeOfCountsAndOfKeys() throws {
        let (a, _) = try Self.counters()
        // The ends of Int64: nothing overflows, in SQL or in Swift.
        #expect(try a.attempt("max", limit: 1, windowSeconds: 900, now: .max - 1) == .allowed)
        if case .limited = try a.attempt("max", limit: 1, windowSeconds: 900, now: .max) {} else { Issue.record("not refused at Int64.max") }
        #expect(try a.attempt("min", limit: 1, windowSeconds: 900, now: .min) == .allowed)
        #expect(try a.attempt("min", limit: 1, windowSeconds: 900, now: .min + 1) == .limited(retryAfterSeconds: 899))
        #expect(try a.attempt("min", limit: 1, windowSeconds: 900, now: .min + 900) == .allowed)
        // A window as long as Int64 goes: an attempt at 0 counts until Int64.max (a clock at Int64.min waits "for ever").
        #expect(try a.attempt("wide", limit: 1, windowSeconds: .max, now: 0) == .allowed)
        #expect(try a.attempt("wide", limit: 1, windowSeconds: .max, now: .min) == .limited(retryAfterSeconds: Int.max))
        #expect(try a.attempt("wide", limit: 1, windowSeconds: .max, now: .max) == .allowed)
        try a.expire(now: .max)
        // Huge limits: every attempt counts, the row holds what it counted.
        for now in Int64(0)..<200 { #expect(try a.attempt("huge", limit: .max, windowSeconds: 3600, now: now) == .allowed) }
        #expect(try a.check("huge", limit: 200, windowSeconds: 3600, now: 200) == .limited(retryAfterSeconds: 3400))
        #expect(try a.check("huge", limit: 201, windowSeconds: 3600, now: 200) == .allowed)
        // A limit below one acts as one (as the in-memory limiter's precondition would have it).
        #expect(try a.attempt("zero", limit: 0, windowSeconds: 60, now: 0) == .allowed)
        #expect(try a.attempt("zero", limit: -5, windowSeconds: 60, now: 1) == .limited(retryAfterSeconds: 59))
        // Keys from clients: empty, control characters and a NUL (PostgreSQL's text refuses a NUL: keys are
        // digested), and a megabyte-long one.
        for key in ["", "email:\u{0}\u{1}\u{7f}\n", "email:" + String(repeating: "é", count: 500_000)] {
            #expect(try a.attempt(key, limit: 1, windowSeconds: 60, now: 0) == .allowed)
            #expect(try a.attempt(key, limit: 1, windowSeconds: 60, now: 0) == .limited(retryAfterSeconds: 60))
        }
    }
}

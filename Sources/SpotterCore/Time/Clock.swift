#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Where the server reads the time: the one place that asks the system. The shell owns a clock and passes
/// `now` into everything that decides (the core, tokens, rate limits, the calendar); tests own a `TestClock`
/// and move it, so an expiry, a reminder or a month boundary is a step of the test, not a sleep.
public protocol Clock: Sendable {
    /// Seconds since 1970-01-01 UTC.
    var now: Int64 { get }
}

extension Clock {
    /// Today's date in UTC as "YYYY-MM-DD" (age rules).
    public var todayUTC: String { Self.utcDay(now) }

    /// The UTC calendar date of `seconds` as "YYYY-MM-DD".
    public static func utcDay(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let year = Int(parts.tm_year) + 1900, month = Int(parts.tm_mon) + 1, day = Int(parts.tm_mday)
        return "\(year)-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)"
    }
}

/// The system's wall clock.
public struct SystemClock: Clock {
    public init() {}
    public var now: Int64 { Int64(time(nil)) }

    /// Milliseconds since 1970-01-01 UTC: for waits measured in real time whatever clock decides (the push
    /// outbox's coalescing windows and retry delays).
    public static var milliseconds: Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

/// A clock that stands still until a test moves it. Safe from any thread (the server reads it on its loop while
/// the test moves it from its own).
public final class TestClock: Clock {
    private let seconds: Atomic<Int64>

    public init(now: Int64 = 1_800_000_000) { seconds = Atomic(now) }

    public var now: Int64 { seconds.load(ordering: .acquiring) }

    /// Moves the clock forward (or back, for a negative `delta`).
    public func advance(by delta: Int64) { seconds.add(delta, ordering: .acquiringAndReleasing) }

    /// Sets the clock to `time`.
    public func set(_ time: Int64) { seconds.store(time, ordering: .releasing) }
}

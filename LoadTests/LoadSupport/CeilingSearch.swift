/// Which rate the ceiling scenario tries next. Steps grow (`rate × factor`, at least `rate + step`) while they pass;
/// after the first failure the search halves the gap between the highest rate that passed and the lowest that
/// failed, `refinements` times, so the ceiling is known within the last gap instead of within one ×1.5 step.
/// Pure: the generator feeds it each step's verdict.
public struct CeilingSearch: Sendable, Equatable {
    public let factor: Double
    public let step: Double
    public let maximum: Double
    public private(set) var refinementsLeft: Int
    /// The highest rate that passed so far (nil: none yet).
    public private(set) var highestPassed: Double?
    /// The lowest rate that failed so far (nil: none yet).
    public private(set) var lowestFailed: Double?

    /// Rates closer than this fraction of the passed rate are not worth another step.
    public static let finestGap = 0.02

    public init(factor: Double, step: Double, maximum: Double, refinements: Int) {
        self.factor = factor
        self.step = step
        self.maximum = maximum
        self.refinementsLeft = max(0, refinements)
    }

    /// Records `rate`'s verdict and returns the next rate to try, or nil when the search is over.
    public mutating func next(after rate: Double, passed: Bool) -> Double? {
        if passed {
            highestPassed = max(highestPassed ?? rate, rate)
        } else {
            lowestFailed = min(lowestFailed ?? rate, rate)
        }
        guard let failed = lowestFailed else {
            // Still growing.
            let grown = max(rate + step, (rate * factor).rounded())
            return grown <= maximum && grown > rate ? grown : nil
        }
        guard let low = highestPassed, refinementsLeft > 0 else { return nil }
        let middle = ((low + failed) / 2).rounded()
        guard middle > low, middle < failed, failed - low > Self.finestGap * low else { return nil }
        refinementsLeft -= 1
        return middle
    }
}

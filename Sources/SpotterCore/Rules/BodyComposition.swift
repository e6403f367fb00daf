import Foundation
import SpotterProtocol

/// Body-fat percentage from measurements (seed 004), and the rules of measurement entries and body-fat goals.
/// Pure: no storage, no clock (callers pass the time).
///
/// - US Navy circumference method (Hodgdon & Beckett, 1984), metric form: men use neck, waist (at the navel)
///   and height; women add the hip.
/// - Jackson–Pollock skinfolds: 3 sites (men chest, abdomen, thigh — 1978; women triceps, suprailiac, thigh —
///   1980) or 7 sites (chest, midaxillary, triceps, subscapular, abdomen, suprailiac, thigh), with age; the body
///   density becomes a percentage through Siri's equation (495 / density − 450).
public enum BodyComposition {
    public enum Sex: String, Sendable, CaseIterable {
        case male, female
    }

    public enum Site: String, Sendable, CaseIterable {
        case chest, midaxillary, triceps, subscapular, abdomen, suprailiac, thigh
    }

    /// The skinfold sites of each method.
    public static func sites(threeSite: Bool, sex: Sex) -> [Site] {
        guard threeSite else { return Site.allCases }
        return sex == .male ? [.chest, .abdomen, .thigh] : [.triceps, .suprailiac, .thigh]
    }

    /// Siri (1961): body density (g/mL) to percent fat.
    public static func siri(density: Double) -> Double { 495 / density - 450 }

    /// US Navy method, all lengths in cm. `hip` is required for women. Nil when the measurements cannot be
    /// a body (waist not above the neck, non-positive lengths).
    public static func navy(sex: Sex, heightCm: Double, neckCm: Double, waistCm: Double, hipCm: Double?) -> Double? {
        guard heightCm > 0, neckCm > 0, waistCm > 0 else { return nil }
        switch sex {
        case .male:
            guard waistCm > neckCm else { return nil }
            return siri(density: 1.0324 - 0.19077 * log10(waistCm - neckCm) + 0.15456 * log10(heightCm))
        case .female:
            guard let hipCm, hipCm > 0, waistCm + hipCm > neckCm else { return nil }
            return siri(density: 1.29579 - 0.35004 * log10(waistCm + hipCm - neckCm) + 0.22100 * log10(heightCm))
        }
    }

    /// Jackson–Pollock, skinfolds in mm by site (exactly the method's sites), age in years.
    public static func skinfolds(sex: Sex, age: Int, folds: [Site: Double], threeSite: Bool) -> Double? {
        let wanted = sites(threeSite: threeSite, sex: sex)
        guard Set(folds.keys) == Set(wanted), folds.values.allSatisfy({ $0 > 0 }), age > 0 else { return nil }
        let s = folds.values.reduce(0, +), a = Double(age)
        let density: Double
        switch (threeSite, sex) {
        case (true, .male): density = 1.10938 - 0.0008267 * s + 0.0000016 * s * s - 0.0002574 * a
        case (true, .female): density = 1.0994921 - 0.0009929 * s + 0.0000023 * s * s - 0.0001392 * a
        case (false, .male): density = 1.112 - 0.00043499 * s + 0.00000055 * s * s - 0.00028826 * a
        case (false, .female): density = 1.097 - 0.00046971 * s + 0.00000056 * s * s - 0.00012828 * a
        }
        return siri(density: density)
    }

    // MARK: - Entries and goals

    /// Entries are at least 7 days apart; exactly 7 days (to the second) is allowed (seed 004 asks to decide).
    public static let minimumInterval: Int64 = 7 * 86_400

    /// When the next entry may be made after one at `last` (nil: now).
    public static func nextEntryAllowed(after last: Int64?) -> Int64? { last.map { $0 + minimumInterval } }

    public static func mayRecord(now: Int64, last: Int64?) -> Bool {
        guard let allowed = nextEntryAllowed(after: last) else { return true }
        return now >= allowed
    }

    /// The lowest cutting target allowed (seed 004 FR-015).
    public static func safeMinimum(_ sex: Sex) -> Double { sex == .male ? 8 : 15 }

    public enum GoalKind: String, Sendable {
        case cutting, bulking
    }

    public enum GoalProblem: Equatable, Sendable {
        /// A cutting target below 8 % (men) or 15 % (women).
        case unsafeTarget(minimum: Double)
        /// Cutting to a target not below the current value, or bulking to a ceiling not above it.
        case targetNotAhead
    }

    /// Checks a new goal against the current body fat.
    public static func check(goal kind: GoalKind, target: Double, current: Double, sex: Sex) -> GoalProblem? {
        switch kind {
        case .cutting:
            if target < safeMinimum(sex) { return .unsafeTarget(minimum: safeMinimum(sex)) }
            return target < current ? nil : .targetNotAhead
        case .bulking:
            return target > current ? nil : .targetNotAhead
        }
    }

    public enum GoalState: String, Sendable {
        case active
        /// A bulking goal within 1 point of its ceiling.
        case nearCeiling = "near_ceiling"
        case completed
    }

    /// Where a goal stands after a new measurement.
    public static func progress(goal kind: GoalKind, target: Double, current: Double) -> GoalState {
        switch kind {
        case .cutting: return current <= target ? .completed : .active
        case .bulking: return current >= target ? .completed : target - current <= 1 ? .nearCeiling : .active
        }
    }
}

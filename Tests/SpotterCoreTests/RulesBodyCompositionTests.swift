import Foundation
import Testing
@testable import SpotterCore

/// Body-fat formulas against published worked examples, and seed 004's entry and goal rules.
@Suite("BodyComposition: body fat, the 7-day rule, goals")
struct RulesBodyCompositionTests {
    static let inch = 2.54

    @Test("Jackson–Pollock 3 sites: a 30-year-old man, skinfolds 15 + 18 + 20 mm, density 1.0623372, about 16.0 %")
    func jacksonPollockThreeSites() throws {
        // Worked example published with the equations (calculatorlib.com, "Jackson-Pollock caliper body fat").
        let fat = try #require(BodyComposition.skinfolds(sex: .male, age: 30, folds: [.chest: 15, .abdomen: 18, .thigh: 20], threeSite: true))
        #expect(abs(fat - 15.95) < 0.01)
        #expect(abs(BodyComposition.siri(density: 1.0623372) - fat) < 0.001)
        // The women's sites are others: a man's sites are refused for a woman.
        #expect(BodyComposition.skinfolds(sex: .female, age: 30, folds: [.chest: 15, .abdomen: 18, .thigh: 20], threeSite: true) == nil)
        let woman = try #require(BodyComposition.skinfolds(sex: .female, age: 30, folds: [.triceps: 15, .suprailiac: 18, .thigh: 20], threeSite: true))
        #expect(woman > fat)  // same folds, the women's equation reads more fat
    }

    @Test("Siri: density 1.0650 g/mL is about 14.8 % fat")
    func siri() {
        #expect(abs(BodyComposition.siri(density: 1.0650) - 14.79) < 0.01)
    }

    @Test("Jackson–Pollock 7 sites: the published equation (1.112 − 0.00043499·S + 0.00000055·S² − 0.00028826·age)")
    func jacksonPollockSevenSites() throws {
        // A 40-year-old man whose seven folds sum to 100 mm: density 1.0624706 by hand, 15.89 %.
        let folds: [BodyComposition.Site: Double] = [.chest: 12, .midaxillary: 14, .triceps: 13, .subscapular: 16, .abdomen: 20,
                                                     .suprailiac: 15, .thigh: 10]
        let fat = try #require(BodyComposition.skinfolds(sex: .male, age: 40, folds: folds, threeSite: false))
        #expect(abs(fat - 15.89) < 0.01)
        #expect(BodyComposition.skinfolds(sex: .male, age: 40, folds: folds.filter { $0.key != .thigh }, threeSite: false) == nil)
    }

    @Test("US Navy: a man 70 in tall, waist 34 in, neck 15 in is about 17.5 %; waist 36, neck 16 about 19.5 %")
    func navyMen() throws {
        // Worked examples published with the inch form of the equation (qcalculator, calculator.city); the server uses
        // Hodgdon and Beckett's metric form, which agrees within a few tenths.
        let first = try #require(BodyComposition.navy(sex: .male, heightCm: 70 * Self.inch, neckCm: 15 * Self.inch,
                                                      waistCm: 34 * Self.inch, hipCm: nil))
        #expect(abs(first - 17.5) < 0.15)
        let second = try #require(BodyComposition.navy(sex: .male, heightCm: 70 * Self.inch, neckCm: 16 * Self.inch,
                                                       waistCm: 36 * Self.inch, hipCm: nil))
        #expect(abs(second - 19.5) < 0.25)
        #expect(BodyComposition.navy(sex: .male, heightCm: 180, neckCm: 40, waistCm: 40, hipCm: nil) == nil)
    }

    @Test("US Navy: women add the hip; the metric form agrees with the published inch form")
    func navyWomen() throws {
        let (height, waist, hip, neck) = (65.0, 30.0, 40.0, 13.0)  // inches
        let inchForm = 163.205 * log10(waist + hip - neck) - 97.684 * log10(height) - 78.387
        let metric = try #require(BodyComposition.navy(sex: .female, heightCm: height * Self.inch, neckCm: neck * Self.inch,
                                                       waistCm: waist * Self.inch, hipCm: hip * Self.inch))
        #expect(abs(metric - inchForm) < 0.5)
        #expect(BodyComposition.navy(sex: .female, heightCm: 165, neckCm: 33, waistCm: 76, hipCm: nil) == nil)
    }

    @Test("entries at least 7 days apart: exactly 7 days is allowed, a second less is not")
    func sevenDays() {
        let last: Int64 = 1_790_000_000
        #expect(BodyComposition.mayRecord(now: last + 7 * 86_400, last: last))
        #expect(!BodyComposition.mayRecord(now: last + 7 * 86_400 - 1, last: last))
        #expect(BodyComposition.mayRecord(now: last, last: nil))
        #expect(BodyComposition.nextEntryAllowed(after: last) == last + 604_800)
    }

    @Test("goals: seed 004's cutting and bulking scenarios")
    func goals() {
        // Cutting from 25 % to 15 %: fine; below 8 % (men) or 15 % (women): refused.
        #expect(BodyComposition.check(goal: .cutting, target: 15, current: 25, sex: .male) == nil)
        #expect(BodyComposition.check(goal: .cutting, target: 7.9, current: 25, sex: .male) == .unsafeTarget(minimum: 8))
        #expect(BodyComposition.check(goal: .cutting, target: 14, current: 25, sex: .female) == .unsafeTarget(minimum: 15))
        #expect(BodyComposition.check(goal: .cutting, target: 26, current: 25, sex: .male) == .targetNotAhead)
        // Bulking from 12 % with an 18 % ceiling; the ceiling must be above today's value.
        #expect(BodyComposition.check(goal: .bulking, target: 18, current: 12, sex: .male) == nil)
        #expect(BodyComposition.check(goal: .bulking, target: 11, current: 12, sex: .male) == .targetNotAhead)
        #expect(BodyComposition.progress(goal: .bulking, target: 18, current: 16.5) == .active)
        #expect(BodyComposition.progress(goal: .bulking, target: 18, current: 17.2) == .nearCeiling)
        #expect(BodyComposition.progress(goal: .bulking, target: 18, current: 18) == .completed)
        #expect(BodyComposition.progress(goal: .cutting, target: 15, current: 15) == .completed)
        #expect(BodyComposition.progress(goal: .cutting, target: 15, current: 15.1) == .active)
    }
}

import Testing
import LoadSupport

struct CeilingSearchTests {
    /// Runs the search against a server whose true ceiling is `truth` (a step passes iff rate ≤ truth).
    private func search(truth: Double, start: Double = 500, refinements: Int, maximum: Double = 60_000) -> (Double?, [Double]) {
        var search = CeilingSearch(factor: 1.5, step: 0, maximum: maximum, refinements: refinements)
        var tried: [Double] = []
        var rate: Double? = start
        while let r = rate {
            tried.append(r)
            rate = search.next(after: r, passed: r <= truth)
            #expect(tried.count < 100)
            if tried.count >= 100 { break }
        }
        return (search.highestPassed, tried)
    }

    @Test func withoutRefinementItStopsAtTheFirstFailure() {
        let (found, tried) = search(truth: 25_000, refinements: 0)
        #expect(found == 19_229)  // 500 × 1.5^9, rounded at each step (the steps the README's tables show)
        #expect(tried.last! > 25_000)
    }

    @Test func refinementHalvesTheGapEachTime() {
        let (found, tried) = search(truth: 25_000, refinements: 3)
        // The gap between 19,2xx (pass) and 28,8xx (fail) halved three times: within 1/8 of it, below the truth.
        let found1 = found!
        #expect(found1 <= 25_000)
        #expect(25_000 - found1 < (28_844 - 19_229) / 8 + 1)
        #expect(tried.count == 11 + 3)  // 500 … 28,844, then three halvings
    }

    @Test func neverTriesARateTwiceNorOutsideTheBracket() {
        for truth in stride(from: 400.0, through: 70_000, by: 1_777) {
            let (found, tried) = search(truth: truth, refinements: 6)
            #expect(Set(tried).count == tried.count)
            #expect(tried.allSatisfy { $0 <= 60_000 })
            if let found { #expect(found <= truth) } else { #expect(truth < 500) }
        }
    }

    @Test func aFailingFirstStepEndsTheSearch() {
        var search = CeilingSearch(factor: 1.5, step: 0, maximum: 60_000, refinements: 3)
        #expect(search.next(after: 500, passed: false) == nil)
        #expect(search.highestPassed == nil)
    }

    @Test func theMaximumStopsGrowth() {
        var search = CeilingSearch(factor: 1.5, step: 0, maximum: 1_000, refinements: 3)
        #expect(search.next(after: 500, passed: true) == 750)
        #expect(search.next(after: 750, passed: true) == nil)  // 1,125 is above the maximum
    }

    @Test func aFlatStepWithoutAFactorStillGrows() {
        var search = CeilingSearch(factor: 1, step: 250, maximum: 1_000, refinements: 0)
        #expect(search.next(after: 500, passed: true) == 750)
        #expect(search.next(after: 750, passed: true) == 1_000)
        #expect(search.next(after: 1_000, passed: true) == nil)
    }
}

/// The ranges of the numbers a client sends, checked where a command is decoded (`SocketCommandBody.checkRanges`),
/// before any rule or arithmetic sees them: a value outside is refused `out_of_range` naming the field, so the
/// server's own arithmetic on what it accepted (a start plus a duration, a range's length) cannot overflow.
/// Protocol/README.md ("Numbers") lists them; the rules of each command narrow them further (a session's
/// duration is 15–60 minutes, a page 1–100).
public enum WireRange {
    /// Unix seconds: 1970-01-01T00:00:00Z through 9999-12-31T23:59:59Z.
    public static let time: ClosedRange<Int64> = 0...253_402_300_799
    /// Seqs, cursors and log positions: 0 through 2^53 − 1, which a JavaScript number holds exactly.
    public static let position: ClosedRange<Int64> = 0...9_007_199_254_740_991
    /// Minutes of a session: at most a day.
    public static let minutes: ClosedRange<Int64> = 1...1_440
    /// Small counts (a page's `limit`, a challenge `day`, stars, an age): 0 through 1,000,000.
    public static let count: ClosedRange<Int64> = 0...1_000_000
    /// Measured quantities (kilograms, pounds, centimetres, millimetres, percent): −1,000,000 through 1,000,000.
    public static let quantity: ClosedRange<Double> = -1_000_000...1_000_000

    /// Refuses `value` (when present) outside `range`, naming `field`.
    public static func check(_ value: Double?, in range: ClosedRange<Double>, field: String) throws(APIError) {
        if let value, !range.contains(value) { throw APIError(.outOfRange, field: field) }
    }

    public static func check<Value: BinaryInteger>(_ value: Value?, in range: ClosedRange<Int64>, field: String) throws(APIError) {
        guard let value else { return }
        guard let wide = Int64(exactly: value), range.contains(wide) else { throw APIError(.outOfRange, field: field) }
    }
}

// MARK: - Each command's numbers

extension SessionCreateCommand {
    public func checkRanges() throws(APIError) {
        try WireRange.check(start, in: WireRange.time, field: "start")
        try WireRange.check(durationMinutes, in: WireRange.minutes, field: "duration_minutes")
    }
}

extension SessionActCommand {
    public func checkRanges() throws(APIError) {
        try WireRange.check(start, in: WireRange.time, field: "start")
    }
}

extension SessionsCommand {
    public func checkRanges() throws(APIError) {
        try WireRange.check(from, in: WireRange.time, field: "from")
        try WireRange.check(to, in: WireRange.time, field: "to")
        try WireRange.check(limit, in: WireRange.count, field: "limit")
    }
}

extension RecordCommand {
    public func checkRanges() throws(APIError) {
        try WireRange.check(limit, in: WireRange.count, field: "limit")
    }
}

extension DashboardCommand {
    public func checkRanges() throws(APIError) {
        try WireRange.check(from, in: WireRange.time, field: "from")
        try WireRange.check(to, in: WireRange.time, field: "to")
    }
}

extension ReceiptCommand {
    public func checkRanges() throws(APIError) {
        try WireRange.check(seq, in: WireRange.position, field: "seq")
    }
}

extension HistoryCommand {
    public func checkRanges() throws(APIError) {
        try WireRange.check(beforeSeq, in: WireRange.position, field: "before_seq")
        try WireRange.check(limit, in: WireRange.count, field: "limit")
    }
}

extension ResumeCommand {
    public func checkRanges() throws(APIError) {
        try WireRange.check(cursor, in: WireRange.position, field: "cursor")
    }
}

extension MealsCommand {
    public func checkRanges() throws(APIError) {
        try WireRange.check(before, in: WireRange.position, field: "before")
        try WireRange.check(limit, in: WireRange.count, field: "limit")
    }
}

extension RatingSubmitCommand {
    public func checkRanges() throws(APIError) {
        try WireRange.check(stars, in: WireRange.count, field: "stars")
    }
}

extension ChallengeCheckCommand {
    public func checkRanges() throws(APIError) {
        try WireRange.check(day, in: WireRange.count, field: "day")
    }
}

extension CheckInSubmitCommand {
    public func checkRanges() throws(APIError) {
        try WireRange.check(weight, in: WireRange.quantity, field: "weight")
    }
}

extension MeasurementAddCommand {
    public func checkRanges() throws(APIError) {
        try WireRange.check(age, in: WireRange.count, field: "age")
        for (value, field) in [(heightCm, "height_cm"), (neckCm, "neck_cm"), (waistCm, "waist_cm"), (hipCm, "hip_cm")] {
            try WireRange.check(value, in: WireRange.quantity, field: field)
        }
        for (site, value) in skinfoldsMm ?? [:] {
            try WireRange.check(value, in: WireRange.quantity, field: "skinfolds_mm." + site)
        }
    }
}

extension GoalSetCommand {
    public func checkRanges() throws(APIError) {
        try WireRange.check(targetPercent, in: WireRange.quantity, field: "target_percent")
        try WireRange.check(weightKg, in: WireRange.quantity, field: "weight_kg")
        try WireRange.check(heightCm, in: WireRange.quantity, field: "height_cm")
        try WireRange.check(age, in: WireRange.count, field: "age")
    }
}

extension ChallengeCreateCommand {
    public func checkRanges() throws(APIError) {
        for (index, task) in (tasks ?? []).enumerated() {
            try WireRange.check(task.day, in: WireRange.count, field: "tasks[\(index)].day")
            try WireRange.check(task.doneAt, in: WireRange.time, field: "tasks[\(index)].done_at")
        }
    }
}

extension SendMessageCommand {
    public func checkRanges() throws(APIError) {
        guard let meal else { return }
        for (value, field) in [(meal.calories, "calories"), (meal.proteinG, "protein_g"), (meal.carbsG, "carbs_g"), (meal.fatsG, "fats_g")] {
            try WireRange.check(value, in: WireRange.quantity, field: "meal." + field)
        }
    }
}

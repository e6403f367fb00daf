import FoundationEssentials
import SpotterProtocol

/// Why a change to the coaching record was refused.
public enum RecordError: Error, Equatable, Sendable {
    case missing(String)
    case outOfRange(String)
    case badValue(String)
    case notFound(String)
    /// A task checked before its day, or unchecked on another day than the one it was checked.
    case taskNotAllowed
    /// A measurement less than 7 days after the last: the next one is allowed from `nextAllowed`.
    case tooSoon(nextAllowed: Int64, now: Int64)
    /// A cutting target below the safe minimum for the sex.
    case unsafeGoal
    /// A goal before any measurement (it is measured against the newest one).
    case noMeasurement
    /// A group challenge (with a template) of another length than 7, 14 or 30 days.
    case challengeLength
    /// Already in an open challenge of the template.
    case alreadyJoined
    /// Leaving or checking a challenge that is over for the client (completed, ended or left).
    case challengeOver
    /// A new goal while one is active, without `replace`.
    case goalActive
}

extension APIError {
    public init(record error: RecordError) {
        switch error {
        case .missing(let field): self.init(.missingField, field: field)
        case .outOfRange(let field): self.init(.outOfRange, field: field)
        case .badValue(let field): self.init(.badRequest, field: field)
        case .notFound(let field): self.init(.recordNotFound, field: field)
        case .taskNotAllowed: self.init(.taskNotAllowed, field: "day")
        case .tooSoon(let next, let now): self.init(.measurementTooSoon, retryAfterSeconds: Int(max(1, next - now)))
        case .unsafeGoal: self.init(.unsafeGoal, field: "target_percent")
        case .noMeasurement: self.init(.conflict, field: "target_percent")
        case .challengeLength: self.init(.challengeLength, field: "tasks")
        case .alreadyJoined: self.init(.challengeAlreadyJoined, field: "template_id")
        case .challengeOver: self.init(.challengeOver, field: "challenge_id")
        case .goalActive: self.init(.goalActive, field: "replace")
        }
    }
}

/// Calendar days as the apps count them: a day number (days since 1970-01-01) in a time zone, and the
/// `YYYY-MM-DD` form challenges carry.
public enum LocalDay {
    /// The day of `time` (Unix seconds) in `zone`.
    public static func of(_ time: Int64, in zone: TimeZone) -> Int64 {
        let offset = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(time))))
        return floorDiv(time + offset, 86_400)
    }

    /// `YYYY-MM-DD` to its day number; nil when it is not a real date. Read from the bytes (the dashboard reads
    /// every challenge's date).
    public static func parse(_ text: String) -> Int64? {
        var text = text
        text.makeContiguousUTF8()
        return text.utf8.withContiguousStorageIfAvailable { bytes -> Int64? in
            guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
            func number(_ range: Range<Int>) -> Int64? {
                var value: Int64 = 0
                for index in range {
                    let digit = bytes[index] &- UInt8(ascii: "0")
                    guard digit < 10 else { return nil }
                    value = value * 10 + Int64(digit)
                }
                return value
            }
            guard let y = number(0..<4), let m = number(5..<7), let d = number(8..<10),
                  (1...12).contains(m), d >= 1, d <= daysIn(month: m, year: y) else { return nil }
            return days(year: y, month: m, day: d)
        } ?? nil
    }

    public static func format(_ day: Int64) -> String {
        // Civil date from a day number (Howard Hinnant's algorithm, era-based).
        let z = day + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(y)-\(two(m))-\(two(d))"
    }

    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDiv(y, 400)
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }
}

/// The coaching record of every client, in memory: the newest state of each challenge, check-in, measurement
/// and goal, as the log's `record` records left them. The rules decide a change and return the records' bodies
/// without changing anything; the shell applies them (`apply`) in the same step and appends them to the log, and
/// a start applies every stored one in order. Pure: no clock (callers pass the time and the client's day).
public struct CoachingBook: Sendable {
    public private(set) var challenges: [String: ChallengeView] = [:]
    public private(set) var checkIns: [String: CheckInView] = [:]
    private var challengesOf: [String: [String]] = [:]
    private var checkInsOf: [String: [String]] = [:]
    /// Each client's challenges as the dashboard counts them, in creation order (no strings to copy).
    private var progressOf: [String: [ChallengeProgress]] = [:]
    /// Each client's check-in times, in creation order (the same as time order).
    var checkInTimesOf: [String: [Int64]] = [:]
    /// By client, oldest first.
    private var measurementsOf: [String: [MeasurementView]] = [:]
    /// The newest goal of each client (active or not).
    private var goalOf: [String: GoalView] = [:]
    /// Challenge ids by coach and template id (each coach names their own templates).
    var templates: [TemplateKey: [String]] = [:]
    /// Daily check-ins (`CoachingBook+DailyCheckIns.swift`).
    public internal(set) var dailyCheckIns = DailyCheckInLog()

    struct TemplateKey: Hashable, Sendable {
        var coachID: String
        var templateID: String
    }

    public init() {}

    public static let challengeDays = 3...14
    public static let maxNameCharacters = 100
    public static let maxTextCharacters = 1000
    public static let focuses: Set<String> = ["training", "nutrition", "recovery", "consistency"]
    public static let intensities: Set<String> = ["light", "moderate", "intense"]
    public static let poundsPerKilogram = 2.20462262185
    public static let weightsKg = 20.0...400.0

    // MARK: - Applying

    /// Applies a stored or just-decided body: the item it carries replaces the one with its id.
    public mutating func apply(_ body: RecordBody) {
        if let challenge = body.challenge {
            let progress = ChallengeProgress(challenge)
            if challenges[challenge.id] == nil {
                challengesOf[challenge.clientId, default: []].append(challenge.id)
                progressOf[challenge.clientId, default: []].append(progress)
                if let template = challenge.templateId {
                    templates[TemplateKey(coachID: challenge.coachId, templateID: template), default: []].append(challenge.id)
                }
            }
            else if let index = progressOf[challenge.clientId]?.lastIndex(where: { $0.id == challenge.id }) {
                progressOf[challenge.clientId]![index] = progress
            }
            challenges[challenge.id] = challenge
        }
        if let checkIn = body.checkIn {
            if checkIns[checkIn.id] == nil {
                checkInsOf[checkIn.clientId, default: []].append(checkIn.id)
                checkInTimesOf[checkIn.clientId, default: []].append(checkIn.createdAt)
            }
            checkIns[checkIn.id] = checkIn
        }
        if let measurement = body.measurement {
            var list = measurementsOf[measurement.clientId] ?? []
            if let index = list.firstIndex(where: { $0.id == measurement.id }) { list[index] = measurement } else { list.append(measurement) }
            measurementsOf[measurement.clientId] = list
        }
        if let goal = body.goal {
            if let current = goalOf[goal.clientId], current.id != goal.id, goal.status == "replaced" { return }
            goalOf[goal.clientId] = goal
        }
        if let daily = body.dailyCheckIn { dailyCheckIns.apply(daily) }
    }

    /// Forgets everything of a client's record (their account was erased; the log's rows were emptied with it).
    public mutating func forget(clientID: String) {
        let gone = Set(challengesOf.removeValue(forKey: clientID) ?? [])
        for id in gone { challenges[id] = nil }
        for id in checkInsOf.removeValue(forKey: clientID) ?? [] { checkIns[id] = nil }
        progressOf[clientID] = nil
        checkInTimesOf[clientID] = nil
        measurementsOf[clientID] = nil
        goalOf[clientID] = nil
        dailyCheckIns.forget(clientID: clientID)
        if !gone.isEmpty {
            templates = templates.compactMapValues { ids in
                let kept = ids.filter { !gone.contains($0) }
                return kept.isEmpty ? nil : kept
            }
        }
    }

    // MARK: - Reading

    /// A client's challenges, newest first, with status and progress as of `today`.
    public func challenges(of clientID: String, today: Int64) -> [ChallengeView] {
        (challengesOf[clientID] ?? []).reversed().compactMap { challenges[$0].map { CoachingBook.current($0, today: today) } }
    }

    public func checkIns(of clientID: String) -> [CheckInView] {
        (checkInsOf[clientID] ?? []).reversed().compactMap { checkIns[$0] }
    }

    /// The client's newest `count` check-ins, newest first.
    public func newestCheckIns(of clientID: String, count: Int) -> [CheckInView] {
        (checkInsOf[clientID] ?? []).suffix(count).reversed().compactMap { checkIns[$0] }
    }

    /// How many check-ins the client made in [from, to).
    public func checkInCount(of clientID: String, from: Int64, to: Int64) -> Int {
        guard let times = checkInTimesOf[clientID] else { return 0 }
        return CoachDashboard.firstIndex(in: times, atLeast: to) - CoachDashboard.firstIndex(in: times, atLeast: from)
    }

    /// The client's challenges as the dashboard counts them, oldest first.
    public func progress(of clientID: String) -> [ChallengeProgress] { progressOf[clientID] ?? [] }

    /// The client's challenges that are not over (pending or active) as of `today`, newest first.
    public func openChallenges(of clientID: String, today: Int64) -> [ChallengeView] {
        (progressOf[clientID] ?? []).reversed().compactMap { progress in
            let status = progress.status(today: today)
            guard status == "pending" || status == "active", let challenge = challenges[progress.id] else { return nil }
            return CoachingBook.current(challenge, today: today)
        }
    }

    /// Newest first.
    public func measurements(of clientID: String) -> [MeasurementView] { (measurementsOf[clientID] ?? []).reversed() }

    // MARK: - Pages (the `record` reply)

    /// A page of a list, newest first: at most `limit` items older than the item `after` (nil: from the newest),
    /// and whether older ones follow. Nil when `after` is not an item of the list. Items are only ever added at
    /// the new end, so paging while items are added neither repeats nor skips one.
    public struct Page<Item: Sendable>: Sendable {
        public var items: [Item]
        public var more: Bool
    }

    public func challengesPage(of clientID: String, after: String?, limit: Int, today: Int64) -> Page<ChallengeView>? {
        Self.page(challengesOf[clientID] ?? [], id: { $0 }, after: after, limit: limit)
            .map { Page(items: $0.items.compactMap { challenges[$0].map { CoachingBook.current($0, today: today) } }, more: $0.more) }
    }

    public func checkInsPage(of clientID: String, after: String?, limit: Int) -> Page<CheckInView>? {
        Self.page(checkInsOf[clientID] ?? [], id: { $0 }, after: after, limit: limit)
            .map { Page(items: $0.items.compactMap { checkIns[$0] }, more: $0.more) }
    }

    public func measurementsPage(of clientID: String, after: String?, limit: Int) -> Page<MeasurementView>? {
        Self.page(measurementsOf[clientID] ?? [], id: \.id, after: after, limit: limit)
    }

    /// `list` is oldest first; the page reads it from the end.
    static func page<Item: Sendable>(_ list: [Item], id: (Item) -> String, after: String?, limit: Int) -> Page<Item>? {
        var end = list.endIndex
        if let after {
            guard let found = list.lastIndex(where: { id($0) == after }) else { return nil }
            end = found
        }
        let start = max(list.startIndex, end - max(0, limit))
        return Page(items: list[start..<end].reversed(), more: start > list.startIndex)
    }

    public func goal(of clientID: String) -> GoalView? { goalOf[clientID] }

    /// The newest check-in's weight.
    public func latestWeight(of clientID: String) -> Double? {
        checkInsOf[clientID]?.last.flatMap { checkIns[$0]?.weightKg }
    }

    /// When the next measurement may be added (nil: now).
    public func nextMeasurementAllowed(of clientID: String) -> Int64? {
        BodyComposition.nextEntryAllowed(after: measurementsOf[clientID]?.last?.createdAt)
    }

    /// Challenges a coach made from a template that are not over (pending or active) as of each client's `today`.
    public func participants(coach coachID: String, template: String, today: (String) -> Int64) -> Int {
        (templates[TemplateKey(coachID: coachID, templateID: template)] ?? []).reduce(0) { count, id in
            guard let challenge = challenges[id] else { return count }
            let status = CoachingBook.status(challenge, today: today(challenge.clientId))
            return count + (status == "pending" || status == "active" ? 1 : 0)
        }
    }

    /// A challenge with its progress and status recomputed for `today` (the client's day number).
    public static func current(_ challenge: ChallengeView, today: Int64) -> ChallengeView {
        var view = challenge
        view.done = challenge.tasks.filter { $0.doneAt != nil }.count
        view.percent = challenge.days == 0 ? 0 : view.done * 100 / challenge.days
        view.status = status(challenge, today: today)
        return view
    }

    public static func status(_ challenge: ChallengeView, today: Int64) -> String {
        ChallengeProgress(challenge).status(today: today)
    }

    // MARK: - Challenges

    /// A challenge command with who asks, for whom, its new id and the day and time it is decided at.
    public struct ChallengeRequest<Command: Sendable>: Sendable {
        public var id: String
        public var clientID: String
        public var coachID: String
        public var command: Command
        public var today: Int64
        public var now: Int64
        public init(id: String, clientID: String, coachID: String, command: Command, today: Int64, now: Int64) {
            self.id = id
            self.clientID = clientID
            self.coachID = coachID
            self.command = command
            self.today = today
            self.now = now
        }
    }

    public typealias NewChallenge = ChallengeRequest<ChallengeCreateCommand>

    public func createChallenge(_ new: NewChallenge) throws(RecordError) -> RecordBody {
        let command = new.command
        let name = try CoachingBook.text(command.name, field: "name", max: CoachingBook.maxNameCharacters)
        let description = try CoachingBook.optionalText(command.description, field: "description")
        guard let startText = command.startDate else { throw .missing("start_date") }
        guard let start = LocalDay.parse(startText) else { throw .badValue("start_date") }
        guard start >= new.today else { throw .outOfRange("start_date") }
        guard let tasks = command.tasks, !tasks.isEmpty else { throw .missing("tasks") }
        try checkLength(tasks.count, template: command.templateId, clientID: new.clientID, coachID: new.coachID, today: new.today)
        let createdBy = command.createdBy ?? "coach"
        guard createdBy == "coach" || createdBy == "ai" else { throw .badValue("created_by") }
        if let template = command.templateId, template.isEmpty || template.count > 64 { throw .outOfRange("template_id") }
        var made: [ChallengeTaskView] = []
        for (index, task) in tasks.enumerated() {
            let prefix = "tasks[\(index)]."
            let taskName = try CoachingBook.text(task.name, field: prefix + "name", max: CoachingBook.maxNameCharacters)
            let taskDescription = try CoachingBook.optionalText(task.description, field: prefix + "description")
            guard let focus = task.focus else { throw .missing(prefix + "focus") }
            guard CoachingBook.focuses.contains(focus) else { throw .badValue(prefix + "focus") }
            guard let intensity = task.intensity else { throw .missing(prefix + "intensity") }
            guard CoachingBook.intensities.contains(intensity) else { throw .badValue(prefix + "intensity") }
            made.append(ChallengeTaskView(day: index + 1, name: taskName, description: taskDescription, focus: focus,
                                          intensity: intensity, doneAt: nil))
        }
        let challenge = ChallengeView(
            id: new.id, clientId: new.clientID, coachId: new.coachID, name: name, description: description,
            startDate: LocalDay.format(start), days: made.count, createdBy: createdBy, templateId: command.templateId,
            tasks: made, done: 0, percent: 0, status: "", createdAt: new.now)
        return RecordBody(change: "challenge.created", challenge: CoachingBook.current(challenge, today: new.today))
    }

    /// The client checks a task off (from its day on) or unchecks it (only on the day they checked it).
    /// Checking a done task, or unchecking an open one, changes nothing (nil): a retry is harmless.
    public func checkTask(challengeID: String, clientID: String, day: Int, done: Bool, today: Int64,
                          dayOf: (Int64) -> Int64, now: Int64) throws(RecordError) -> RecordBody? {
        guard let challenge = challenges[challengeID], challenge.clientId == clientID else { throw .notFound("challenge_id") }
        guard challenge.leftAt == nil else { throw .challengeOver }
        guard day >= 1, day <= challenge.tasks.count else { throw .outOfRange("day") }
        guard let first = LocalDay.parse(challenge.startDate) else { throw .notFound("challenge_id") }
        var task = challenge.tasks[day - 1]
        if done {
            guard task.doneAt == nil else { return nil }
            guard today >= first + Int64(day) - 1 else { throw .taskNotAllowed }
            task.doneAt = now
        } else {
            guard let doneAt = task.doneAt else { return nil }
            guard dayOf(doneAt) == today else { throw .taskNotAllowed }
            task.doneAt = nil
        }
        var changed = challenge
        changed.tasks[day - 1] = task
        return RecordBody(change: done ? "challenge.task_checked" : "challenge.task_unchecked",
                          challenge: CoachingBook.current(changed, today: today))
    }

    // MARK: - Check-ins

    public func submitCheckIn(id: String, clientID: String, command: CheckInSubmitCommand,
                              photoExists: (String) -> Bool, now: Int64) throws(RecordError) -> RecordBody {
        guard let weight = command.weight else { throw .missing("weight") }
        let unit = command.unit ?? "kg"
        guard unit == "kg" || unit == "lbs" else { throw .badValue("unit") }
        let kg = unit == "kg" ? weight : weight / CoachingBook.poundsPerKilogram
        guard weight.isFinite, CoachingBook.weightsKg.contains(kg) else { throw .outOfRange("weight") }
        let notes = try CoachingBook.optionalText(command.notes, field: "notes")
        let challenges = try CoachingBook.optionalText(command.challenges, field: "challenges")
        if let photos = command.photos {
            for (name, ref) in [("front", photos.front), ("side", photos.side), ("back", photos.back)] {
                if let ref, !photoExists(ref) { throw .notFound("photos." + name) }
            }
        }
        let checkIn = CheckInView(id: id, clientId: clientID, weightKg: (kg * 100).rounded() / 100, photos: command.photos,
                                  notes: notes, challenges: challenges, coachComment: nil, commentedAt: nil, createdAt: now)
        return RecordBody(change: "check_in.created", checkIn: checkIn)
    }

    public func comment(checkInID: String, clientID: (String) -> Bool, comment: String?, now: Int64) throws(RecordError) -> RecordBody {
        guard let checkIn = checkIns[checkInID], clientID(checkIn.clientId) else { throw .notFound("check_in_id") }
        var changed = checkIn
        changed.coachComment = try CoachingBook.text(comment, field: "comment", max: CoachingBook.maxTextCharacters)
        changed.commentedAt = now
        return RecordBody(change: "check_in.commented", checkIn: changed)
    }

    // MARK: - Measurements and goals

    /// A measurement (at least 7 days after the last), and the change it makes to an active goal.
    public func addMeasurement(id: String, clientID: String, command: MeasurementAddCommand,
                               now: Int64) throws(RecordError) -> [RecordBody] {
        guard let method = command.method else { throw .missing("method") }
        guard let sexName = command.sex else { throw .missing("sex") }
        guard let sex = BodyComposition.Sex(rawValue: sexName) else { throw .badValue("sex") }
        let fat: Double?
        var view = MeasurementView(id: id, clientId: clientID, method: method, sex: sexName, age: nil, heightCm: nil,
                                   neckCm: nil, waistCm: nil, hipCm: nil, skinfoldsMm: nil, bodyFatPercent: 0, createdAt: now)
        func length(_ value: Double?, _ field: String, _ range: ClosedRange<Double>) throws(RecordError) -> Double {
            guard let value else { throw .missing(field) }
            guard value.isFinite, range.contains(value) else { throw .outOfRange(field) }
            return value
        }
        if method != "inbody", command.inbody != nil { throw .badValue("inbody") }
        switch method {
        case "navy":
            view.heightCm = try length(command.heightCm, "height_cm", 100...250)
            view.neckCm = try length(command.neckCm, "neck_cm", 20...80)
            view.waistCm = try length(command.waistCm, "waist_cm", 40...250)
            if sex == .female { view.hipCm = try length(command.hipCm, "hip_cm", 50...250) }
            if command.skinfoldsMm != nil { throw .badValue("skinfolds_mm") }
            fat = BodyComposition.navy(sex: sex, heightCm: view.heightCm!, neckCm: view.neckCm!, waistCm: view.waistCm!, hipCm: view.hipCm)
        case "skinfold3", "skinfold7":
            guard let age = command.age else { throw .missing("age") }
            guard (13...100).contains(age) else { throw .outOfRange("age") }
            guard let given = command.skinfoldsMm else { throw .missing("skinfolds_mm") }
            let wanted = BodyComposition.sites(threeSite: method == "skinfold3", sex: sex)
            var folds: [BodyComposition.Site: Double] = [:]
            for (name, mm) in given {
                guard let site = BodyComposition.Site(rawValue: name), wanted.contains(site) else { throw .badValue("skinfolds_mm." + name) }
                folds[site] = try length(mm, "skinfolds_mm." + name, 2...80)
            }
            if let missing = wanted.first(where: { folds[$0] == nil }) { throw .missing("skinfolds_mm." + missing.rawValue) }
            view.age = age
            view.skinfoldsMm = given
            fat = BodyComposition.skinfolds(sex: sex, age: age, folds: folds, threeSite: method == "skinfold3")
        case "inbody":
            let (scan, scanned) = try Self.inbodyScan(command)
            view.inbody = scan
            fat = scanned
        default:
            throw .badValue("method")
        }
        guard let fat, fat.isFinite, fat > 2, fat < 70 else { throw .outOfRange(method == "navy" ? "waist_cm" : "skinfolds_mm") }
        let last = measurementsOf[clientID]?.last?.createdAt
        guard BodyComposition.mayRecord(now: now, last: last) else {
            throw .tooSoon(nextAllowed: BodyComposition.nextEntryAllowed(after: last)!, now: now)
        }
        view.bodyFatPercent = (fat * 10).rounded() / 10
        var bodies = [RecordBody(change: "measurement.created", measurement: view)]
        if var goal = goalOf[clientID], goal.status == "active" || goal.status == "near_ceiling",
           let kind = BodyComposition.GoalKind(rawValue: goal.kind) {
            let state = BodyComposition.progress(goal: kind, target: goal.targetPercent, current: view.bodyFatPercent)
            if state.rawValue != goal.status {
                goal.status = state.rawValue
                if state == .completed { (goal.completedAt, goal.behindByPercent) = (now, nil) }
                bodies.append(RecordBody(change: state == .completed ? "goal.completed" : "goal.progress", goal: goal))
            } else if let scheduled = CoachingBook.schedule(of: goal, measuredPercent: view.bodyFatPercent, now: now) {
                bodies.append(scheduled)
            }
        }
        return bodies
    }

    /// A new goal against the newest measurement, with its plan; an active one is refused unless `replace`.
    public func setGoal(id: String, clientID: String, command: GoalSetCommand, now: Int64) throws(RecordError) -> [RecordBody] {
        guard let kindName = command.kind else { throw .missing("kind") }
        guard let kind = BodyComposition.GoalKind(rawValue: kindName) else { throw .badValue("kind") }
        guard let target = command.targetPercent else { throw .missing("target_percent") }
        guard target.isFinite, target > 2, target < 70 else { throw .outOfRange("target_percent") }
        guard let latest = measurementsOf[clientID]?.last, let sex = BodyComposition.Sex(rawValue: latest.sex) else {
            throw .noMeasurement
        }
        switch BodyComposition.check(goal: kind, target: target, current: latest.bodyFatPercent, sex: sex) {
        case .unsafeTarget: throw .unsafeGoal
        case .targetNotAhead: throw .outOfRange("target_percent")
        case nil: break
        }
        let person = try planPerson(command, clientID: clientID, sex: sex)
        var bodies: [RecordBody] = []
        if var old = goalOf[clientID], old.status == "active" || old.status == "near_ceiling" {
            guard command.replace == true else { throw .goalActive }
            old.status = "replaced"
            bodies.append(RecordBody(change: "goal.replaced", goal: old))
        }
        let state = BodyComposition.progress(goal: kind, target: target, current: latest.bodyFatPercent)
        bodies.append(RecordBody(change: "goal.created", goal: GoalView(
            id: id, clientId: clientID, kind: kindName, sex: latest.sex, targetPercent: target,
            startPercent: latest.bodyFatPercent, status: state.rawValue, createdAt: now, completedAt: nil,
            plan: person.flatMap { GoalPlanner.plan(kind: kind, person: $0, currentPercent: latest.bodyFatPercent,
                                                    targetPercent: target, start: now) })))
        return bodies
    }

    // MARK: - Text

    static func text(_ value: String?, field: String, max: Int) throws(RecordError) -> String {
        guard let value else { throw .missing(field) }
        let trimmed = value.spotterTrimmed()
        guard !trimmed.isEmpty else { throw .missing(field) }
        guard trimmed.count <= max else { throw .outOfRange(field) }
        return trimmed
    }

    static func optionalText(_ value: String?, field: String) throws(RecordError) -> String? {
        guard let value, value.contains(where: { !$0.isWhitespace }) else { return nil }
        return try text(value, field: field, max: maxTextCharacters)
    }
}

/// A challenge reduced to what its status and the dashboard's completion rate need: its first day and which of
/// its days are done.
public struct ChallengeProgress: Sendable, Equatable {
    public let id: String
    /// The day number of day 1 (nil: a stored date this server cannot read; counted as ended).
    public let startDay: Int64?
    public let done: [Bool]
    /// When tasks were checked off, in task order (the dashboard's engagement).
    public let doneTimes: [Int64]
    /// The main focus of its tasks (`ChallengeTypeCount`).
    public let type: String
    /// Whether the client left it.
    public let left: Bool

    public init(_ challenge: ChallengeView) {
        id = challenge.id
        startDay = LocalDay.parse(challenge.startDate)
        done = challenge.tasks.map { $0.doneAt != nil }
        doneTimes = challenge.tasks.compactMap(\.doneAt)
        type = CoachDashboard.mainFocus(challenge.tasks.map { $0.focus ?? "" })
        left = challenge.leftAt != nil
    }

    /// `left` once the client left it, `pending` before day 1, `active`, `completed` once every task is done,
    /// `ended` after the last day otherwise.
    public func status(today: Int64) -> String {
        if left { return "left" }
        guard let startDay else { return "ended" }
        if !done.contains(false) { return "completed" }
        if today < startDay { return "pending" }
        return today > startDay + Int64(done.count) - 1 ? "ended" : "active"
    }
}

extension RecordBody {
    /// The body of a `record` record (an item of the coaching record as it now stands), or nil for a record of
    /// another kind or a body this server cannot read. `decoder`: one to reuse when decoding many (a start).
    public init?(_ record: ChatRecord, decoder: JSONDecoder = JSONDecoder()) {
        guard let change = record.content.coaching,
              let stored = try? decoder.decode(RecordBody.self, from: Data(change.json.utf8)) else { return nil }
        self = stored
    }
}

import FoundationEssentials
import SpotterProtocol

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

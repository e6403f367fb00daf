import FoundationEssentials
import SpotterProtocol

/// What the shell knows of one current client of a coach, beside their coaching record.
public struct DashboardClient: Sendable {
    public var clientID: String
    public var threadID: String
    public var name: String?
    /// The coach's unread messages in the thread.
    public var unread: Int64
    public var zone: TimeZone
    /// When the client's meal logs in the thread were sent, oldest first.
    public var mealTimes: [Int64]
    public var nextSession: NextSessionView?
    public var pendingResolutions: Int
    public init(clientID: String, threadID: String, name: String?, unread: Int64, zone: TimeZone, mealTimes: [Int64],
                nextSession: NextSessionView?, pendingResolutions: Int) {
        self.clientID = clientID
        self.threadID = threadID
        self.name = name
        self.unread = unread
        self.zone = zone
        self.mealTimes = mealTimes
        self.nextSession = nextSession
        self.pendingResolutions = pendingResolutions
    }
}

/// The coach's dashboard (seed 002 coach §1, §8): a card per client and the coach's analytics over a range.
/// Pure: everything comes in (the record, the clients' counts, the sessions of the range, the time).
public enum CoachDashboard {
    public static let defaultRange: Int64 = 30 * 86_400
    public static let maxRange: Int64 = 366 * 86_400

    /// A client's card as of `now`.
    public static func card(_ client: DashboardClient, book: CoachingBook, now: Int64) -> ClientCardView {
        let today = LocalDay.of(now, in: client.zone)
        let active = book.openChallenges(of: client.clientID, today: today)
        let checkIns = book.newestCheckIns(of: client.clientID, count: 2)
        let daily = book.dailyCheckIns.latest(of: client.clientID)
        let change = checkIns.count >= 2 ? ((checkIns[0].weightKg - checkIns[1].weightKg) * 100).rounded() / 100 : nil
        return ClientCardView(
            clientId: client.clientID, threadId: client.threadID, name: client.name, unread: client.unread,
            goal: book.goal(of: client.clientID).map(Self.withoutPlan),
            activeChallenges: active.map {
                ChallengeSummary(id: $0.id, name: $0.name, done: $0.done, days: $0.days, percent: $0.percent, status: $0.status)
            },
            lastCheckInAt: checkIns.first?.createdAt, latestWeightKg: checkIns.first?.weightKg, weightChangeKg: change,
            nextSession: client.nextSession, pendingResolutions: client.pendingResolutions,
            dailyCheckIn: daily, checkedInToday: daily.map { $0.day == LocalDay.format(today) })
    }

    /// A card's goal leaves its plan out (up to 156 milestones a client; `record` has it): the dashboard stays small.
    static func withoutPlan(_ goal: GoalView) -> GoalView {
        var light = goal
        light.plan = nil
        return light
    }

    /// Every card (by name, then id) and the analytics over [from, to). `attendance`: the coach's sessions that
    /// started in the range and were completed, or missed.
    public static func make(clients: [DashboardClient], book: CoachingBook, attendance: (completed: Int, missed: Int),
                            from: Int64, to: Int64, now: Int64) -> DashboardResult {
        let cards = clients.map { card($0, book: book, now: now) }
            .sorted { ($0.name ?? "", $0.clientId) < ($1.name ?? "", $1.clientId) }
        return DashboardResult(clients: cards, analytics: analytics(clients: clients, book: book, attendance: attendance,
                                                                    from: from, to: to, now: now))
    }

    public static func analytics(clients: [DashboardClient], book: CoachingBook, attendance: (completed: Int, missed: Int),
                                 from: Int64, to: Int64, now: Int64) -> CoachAnalyticsView {
        var due = 0, done = 0, checkIns = 0, mealDays = 0, clientDays = 0
        for client in clients {
            // One offset per client for the range (a DST change inside it moves a day's edge by an hour at most).
            let offset = Int64(client.zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(to))))
            let day = { (time: Int64) in LocalDay.floorDiv(time + offset, 86_400) }
            let firstDay = day(from), lastDay = min(day(to - 1), day(now))
            for challenge in book.progress(of: client.clientID) {
                guard let start = challenge.startDay, start <= lastDay, start + Int64(challenge.done.count) > firstDay else { continue }
                for (index, isDone) in challenge.done.enumerated() {
                    let date = start + Int64(index)
                    guard date >= firstDay, date <= lastDay else { continue }
                    due += 1
                    if isDone { done += 1 }
                }
            }
            checkIns += book.checkInCount(of: client.clientID, from: from, to: to)
            // Distinct days with a meal log: the times are in order, so are their days.
            var index = firstIndex(in: client.mealTimes, atLeast: from)
            var lastCounted: Int64?
            while index < client.mealTimes.count, client.mealTimes[index] < to {
                let mealDay = day(client.mealTimes[index])
                if mealDay != lastCounted {
                    mealDays += 1
                    lastCounted = mealDay
                }
                index += 1
            }
            clientDays += Int(max(0, day(to - 1) - firstDay + 1))
        }
        let weeks = Double(max(to - from, 1)) / Double(7 * 86_400)
        let (attended, missed) = attendance
        return CoachAnalyticsView(
            from: from, to: to, clients: clients.count,
            challengeCompletionPercent: due == 0 ? nil : done * 100 / due,
            checkInsPerClientWeek: clients.isEmpty ? nil : (Double(checkIns) / Double(clients.count) / weeks * 100).rounded() / 100,
            mealLogDaysPercent: clientDays == 0 ? nil : mealDays * 100 / clientDays,
            sessionAttendancePercent: attended + missed == 0 ? nil : attended * 100 / (attended + missed))
    }

    /// What the dashboard needs of a coach's sessions, from one pass over them: each thread's soonest session
    /// still on (waiting for an answer or holding its time, not over by `now`), the conflicts waiting for the
    /// coach by thread, and the sessions that started in [from, to) and were completed or missed.
    public struct SessionFigures: Sendable, Equatable {
        public var next: [String: NextSessionView] = [:]
        public var pending: [String: Int] = [:]
        public var completed = 0
        public var missed = 0
        public init() {}
    }

    public static func sessionFigures(_ sessions: SessionBook, coachID: String, now: Int64, from: Int64, to: Int64) -> SessionFigures {
        var figures = SessionFigures()
        sessions.forEachSession(of: coachID) { session in
            guard session.coachID == coachID else { return }
            if !session.status.isFinal, session.end > now,
               (figures.next[session.threadID]?.start ?? .max, figures.next[session.threadID]?.id ?? "") > (session.start, session.id) {
                figures.next[session.threadID] = NextSessionView(id: session.id, start: session.start, status: session.status.rawValue)
            }
            if session.status == .needsResolution { figures.pending[session.threadID, default: 0] += 1 }
            guard session.start >= from, session.start < to else { return }
            if session.status == .completed { figures.completed += 1 }
            if session.status == .missed { figures.missed += 1 }
        }
        return figures
    }

    /// The index of the first time not before `time` (binary search).
    static func firstIndex(in times: [Int64], atLeast time: Int64) -> Int {
        var low = 0, high = times.count
        while low < high {
            let middle = (low + high) / 2
            if times[middle] < time { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

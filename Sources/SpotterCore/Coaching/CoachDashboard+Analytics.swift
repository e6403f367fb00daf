import FoundationEssentials
import SpotterProtocol

/// The dashboard's engagement and challenge types (seed 002 coach §8 "Analytics": average client engagement, most
/// popular challenge types). Pure, from what the core holds in memory.
///
/// **Engagement.** A client's day is *engaged* when they did at least one thing Spotter records on it: sent a meal
/// log, submitted a check-in, checked off a challenge task, or attended a session (one that started that day and
/// was completed). A client's engagement is their engaged days over their days of the range (their calendar days
/// from `from` to the last second of the range, not past today); the coach's is the mean of their clients', in
/// percent, rounded down: `⌊100 × Σ(engaged_c ÷ days_c) ÷ clients⌋`. Plain chat messages are not counted: the core
/// keeps no per-day index of them (the dashboard reads no log within its 5 ms).
extension CoachDashboard {
    /// The focuses in the order that breaks a tie (the seed's order: training, nutrition, recovery, consistency).
    public static let focusOrder = ["training", "nutrition", "recovery", "consistency"]

    /// A challenge's type: the focus most of its tasks have; a tie goes to the first in `focusOrder`.
    public static func mainFocus(_ focuses: [String]) -> String {
        var counts = [0, 0, 0, 0]
        for focus in focuses {
            if let index = focusOrder.firstIndex(of: focus) { counts[index] += 1 }
        }
        var best = 0
        for index in 1..<counts.count where counts[index] > counts[best] { best = index }
        return focusOrder[best]
    }

    /// Each thread's completed sessions that started in [from, to): their starts (the engagement's "attended").
    public static func attendedStarts(_ sessions: SessionBook, coachID: String, from: Int64, to: Int64) -> [String: [Int64]] {
        var starts: [String: [Int64]] = [:]
        sessions.forEachSession(of: coachID) { session in
            guard session.coachID == coachID, session.status == .completed, session.start >= from, session.start < to else { return }
            starts[session.threadID, default: []].append(session.start)
        }
        return starts
    }

    /// The mean engagement of the clients over [from, to), in percent (nil without a client day to measure).
    public static func engagement(clients: [DashboardClient], book: CoachingBook, attended: [String: [Int64]],
                                  from: Int64, to: Int64, now: Int64) -> Int? {
        figures(clients: clients, book: book, attended: attended, from: from, to: to, now: now).engagement
    }

    /// The challenge types of the clients' challenges that ran in the range (a day of theirs in it, up to today;
    /// left ones too), most first; a tie in the order of `focusOrder`.
    public static func popularTypes(clients: [DashboardClient], book: CoachingBook, from: Int64, to: Int64,
                                    now: Int64) -> [ChallengeTypeCount] {
        figures(clients: clients, book: book, attended: [:], from: from, to: to, now: now).types
    }

    /// Both figures in one pass over the clients (a zone's offset is read once per client: it costs more than the
    /// rest of a client's figures).
    static func figures(clients: [DashboardClient], book: CoachingBook, attended: [String: [Int64]],
                        from: Int64, to: Int64, now: Int64) -> (engagement: Int?, types: [ChallengeTypeCount]) {
        guard from < to else { return (nil, []) }
        var sum = 0.0, measured = 0
        var counts = [0, 0, 0, 0]
        // The range's days, marked engaged (a range is at most `maxRange`: a small array, reused per client).
        var marks: [Bool] = []
        for client in clients {
            let offset = Int64(client.zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(to))))
            let firstDay = LocalDay.floorDiv(from + offset, 86_400)
            let lastDay = min(LocalDay.floorDiv(to - 1 + offset, 86_400), LocalDay.floorDiv(now + offset, 86_400))
            guard lastDay >= firstDay else { continue }
            let days = Int(lastDay - firstDay + 1)
            marks.removeAll(keepingCapacity: true)
            marks.append(contentsOf: repeatElement(false, count: days))
            var engaged = 0
            // Marks the day of each time in [from, to) (`sorted`: times in order, found from `from` by binary search).
            func add(_ times: [Int64], sorted: Bool) {
                var index = sorted ? firstIndex(in: times, atLeast: from) : 0
                while index < times.count {
                    let time = times[index]
                    index += 1
                    guard time < to else {
                        if sorted { break } else { continue }
                    }
                    guard time >= from else { continue }
                    let day = Int(LocalDay.floorDiv(time + offset, 86_400) - firstDay)
                    guard day >= 0, day < days, !marks[day] else { continue }
                    marks[day] = true
                    engaged += 1
                }
            }
            add(client.mealTimes, sorted: true)
            add(book.checkInTimesOf[client.clientID] ?? [], sorted: true)
            for challenge in book.progress(of: client.clientID) {
                if !challenge.doneTimes.isEmpty { add(challenge.doneTimes, sorted: false) }
                guard let start = challenge.startDay, start <= lastDay, start + Int64(challenge.done.count) > firstDay,
                      let index = focusOrder.firstIndex(of: challenge.type) else { continue }
                counts[index] += 1
            }
            add(attended[client.threadID] ?? [], sorted: false)
            sum += Double(engaged) / Double(days)
            measured += 1
        }
        let types = counts.indices.filter { counts[$0] > 0 }
            .sorted { (counts[$0], -$0) > (counts[$1], -$1) }
            .map { ChallengeTypeCount(type: focusOrder[$0], challenges: counts[$0]) }
        return (measured == 0 ? nil : Int((sum * 100 / Double(measured)).rounded(.down)), types)
    }

    /// The analytics with the engagement and the challenge types filled in.
    public static func withEngagement(_ analytics: CoachAnalyticsView, clients: [DashboardClient], book: CoachingBook,
                                      attended: [String: [Int64]], now: Int64) -> CoachAnalyticsView {
        var view = analytics
        (view.engagementPercent, view.popularChallengeTypes) = figures(clients: clients, book: book, attended: attended,
                                                                       from: analytics.from, to: analytics.to, now: now)
        return view
    }
}

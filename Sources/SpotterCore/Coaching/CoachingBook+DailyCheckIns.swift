import FoundationEssentials
import SpotterProtocol

/// Every client's daily check-ins, one per day of their calendar, kept in day order (oldest first).
public struct DailyCheckInLog: Sendable {
    private var byClient: [String: [DailyCheckInView]] = [:]

    public init() {}

    /// A stored or just-decided check-in: replaces the one of its day, else goes in its place by day. Days come in
    /// order but for a change of zone, so the newest is looked at first (a start replaying years of them stays linear).
    public mutating func apply(_ checkIn: DailyCheckInView) {
        var list = byClient.removeValue(forKey: checkIn.clientId) ?? []
        defer { byClient[checkIn.clientId] = list }
        guard let last = list.last, last.day >= checkIn.day else { return list.append(checkIn) }
        if last.day == checkIn.day {
            list[list.count - 1] = checkIn
        } else if let index = list.lastIndex(where: { $0.day == checkIn.day }) {
            list[index] = checkIn
        } else {
            let index = list.firstIndex { $0.day > checkIn.day } ?? list.endIndex
            list.insert(checkIn, at: index)
        }
    }

    public mutating func forget(clientID: String) { byClient[clientID] = nil }

    /// The client's check-in of `day` (`YYYY-MM-DD`).
    public func checkIn(of clientID: String, day: String) -> DailyCheckInView? {
        byClient[clientID]?.last { $0.day == day }
    }

    /// The client's newest day's check-in.
    public func latest(of clientID: String) -> DailyCheckInView? { byClient[clientID]?.last }

    /// Newest day first: at most `limit` check-ins of days before `before` (nil: from the newest), and whether
    /// older ones follow.
    public func page(of clientID: String, before: String?, limit: Int) -> (items: [DailyCheckInView], more: Bool) {
        let list = byClient[clientID] ?? []
        let end = before.map { day in list.firstIndex { $0.day >= day } ?? list.endIndex } ?? list.endIndex
        let start = max(0, end - limit)
        return (Array(list[start..<end].reversed()), start > 0)
    }
}

extension CoachingBook {
    public static let maxDailyNotesCharacters = 500

    /// Today's check-in (`today`: the client's day number now). A second one the same day replaces the first:
    /// same id and `created_at`, new answers, `daily_check_in.updated`.
    public func submitDailyCheckIn(id: String, clientID: String, command: DailyCheckInSubmitCommand, today: Int64,
                                   now: Int64) throws(RecordError) -> RecordBody {
        guard let mood = command.mood else { throw .missing("mood") }
        guard let soreness = command.soreness else { throw .missing("soreness") }
        guard let stress = command.stress else { throw .missing("stress") }
        for (value, field) in [(mood, "mood"), (soreness, "soreness"), (stress, "stress")] where !DailyScore.scale.contains(value) {
            throw .outOfRange(field)
        }
        let sick = command.sick ?? false
        let notes = try CoachingBook.optionalDailyNotes(command.notes)
        let score = DailyScore.overall(mood: mood, soreness: soreness, stress: stress, sick: sick) ?? 0
        let day = LocalDay.format(today)
        let earlier = dailyCheckIns.checkIn(of: clientID, day: day)
        let view = DailyCheckInView(id: earlier?.id ?? id, clientId: clientID, day: day, mood: mood, soreness: soreness,
                                    stress: stress, sick: sick, notes: notes, overallScore: score,
                                    createdAt: earlier?.createdAt ?? now, updatedAt: now)
        return RecordBody(change: earlier == nil ? "daily_check_in.created" : "daily_check_in.updated", dailyCheckIn: view)
    }

    static func optionalDailyNotes(_ value: String?) throws(RecordError) -> String? {
        guard let value, value.contains(where: { !$0.isWhitespace }) else { return nil }
        return try text(value, field: "notes", max: maxDailyNotesCharacters)
    }
}

import FoundationEssentials
import SpotterProtocol

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

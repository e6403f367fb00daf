import FoundationEssentials
import SpotterCore
import SpotterProtocol

/// What the loop knows of one user for their export, copied on the loop when the export starts (the views of
/// the log that live in memory: the user's threads and where each side has read to, their video sessions and a
/// client's coaching record). Everything else — the accounts' rows, the messages, the files — is read off the
/// loop by `ExportArchive` as the archive is sent.
struct ExportSnapshot: Sendable {
    struct Thread: Sendable, Encodable {
        var id: String
        var no: Int64
        var coachID: String
        var clientID: String
        var createdAt: Int64
        var active: Bool
        var lastSeq: Int64
        /// The user's own receipts and the other side's, as `threads` shows them.
        var deliveredSeq: Int64
        var readSeq: Int64
        var peerDeliveredSeq: Int64
        var peerReadSeq: Int64
        enum CodingKeys: String, CodingKey {
            case id, active
            case coachID = "coach_id", clientID = "client_id", createdAt = "created_at", lastSeq = "last_seq"
            case deliveredSeq = "delivered_seq", readSeq = "read_seq", peerDeliveredSeq = "peer_delivered_seq"
            case peerReadSeq = "peer_read_seq"
        }
    }

    /// A client's coaching record, every item (the `record` command's lists, unpaged).
    struct Record: Sendable, Encodable {
        var goal: GoalView?
        var latestWeightKg: Double?
        var challenges: [ChallengeView]
        var checkIns: [CheckInView]
        var measurements: [MeasurementView]
        enum CodingKeys: String, CodingKey {
            case goal, challenges, measurements
            case latestWeightKg = "latest_weight_kg", checkIns = "check_ins"
        }
    }

    var userID: String
    var role: String
    var threads: [Thread]
    var sessions: [SessionView]
    /// Nil for a coach or an admin: a record is its client's (a coach's challenges and comments are in it).
    var record: Record?
    /// How session notices in the threads are worded for this user (as `history` words them).
    var language: Language
    var timeZone: TimeZone

    /// Loop thread only: reads the core's views.
    init(actor: Actor, core: CoachingCore, context: CoreContext) {
        userID = actor.userID
        role = actor.role.rawValue
        threads = core.chat.threads(of: actor.userID).map { thread in
            let side: Side = thread.coachID == actor.userID ? .coach : .client
            return Thread(id: thread.id, no: thread.no, coachID: thread.coachID, clientID: thread.clientID,
                          createdAt: thread.createdAt, active: thread.active, lastSeq: thread.committedSeq,
                          deliveredSeq: thread.deliveredSeq(side), readSeq: thread.readSeq(side),
                          peerDeliveredSeq: thread.deliveredSeq(side.other), peerReadSeq: thread.readSeq(side.other))
        }.sorted { $0.createdAt == $1.createdAt ? $0.id < $1.id : $0.createdAt < $1.createdAt }
        var sessions: [SessionView] = []
        core.sessions.forEachSession(of: actor.userID) { sessions.append($0.view) }
        self.sessions = sessions.sorted { $0.start == $1.start ? $0.id < $1.id : $0.start < $1.start }
        if actor.role == .client {
            let book = core.coaching, client = actor.userID
            let today = LocalDay.of(context.now, in: context.zone(of: client))
            record = Record(goal: book.goal(of: client), latestWeightKg: book.latestWeight(of: client),
                            challenges: book.challenges(of: client, today: today), checkIns: book.checkIns(of: client),
                            measurements: book.measurements(of: client))
        }
        (language, timeZone) = context.wording(for: actor.userID)
    }
}

/// One conversation's state, as the log made it: participants, the last
/// message, and where each participant has received and read to.
///
/// Owned by one thread (the server's loop); not Sendable.
public final class ChatThread {
    public let id: String
    /// The store's number for the thread: log records refer to it.
    public let no: Int64
    public let coachID: String
    public let clientID: String
    public let createdAt: Int64
    /// The same id on both sides (`recount` counts the coach's side twice, as `side(of:)` answers).
    private let sameUser: Bool
    /// Whether this is the client's current link (writable).
    public internal(set) var active: Bool

    /// The last seq given out (its record may still be on its way to disk).
    public internal(set) var lastSeq: Int64 = 0
    /// The last seq whose record is durable: what lists and badges show.
    public internal(set) var committedSeq: Int64 = 0 { didSet { recount() } }
    public internal(set) var lastMessageAt: Int64?
    /// What the conversation list shows, computed when asked (not on every send).
    public var lastPreview: String? {
        if let preview { return preview }
        guard let lastKind, let lastBody else { return nil }
        let made = ChatState.preview(kind: lastKind, body: lastBody, attached: lastAttached)
        preview = made
        self.lastBody = nil  // the preview is all that is kept of it
        return made
    }
    private var preview: String?
    private var lastKind: MessageKind?
    private var lastBody: String?
    /// The last body is an `AttachedText`.
    private var lastAttached = false
    public internal(set) var lastSide: Side?
    /// The seq of the message the preview shows, when this process applied it (nil after a start from a checkpoint).
    public internal(set) var lastMessageSeq: Int64?
    /// Messages deleted since this process started (an edit decided after a delete it has not read is refused).
    public internal(set) var deletedSeqs: Set<Int64> = []
    /// Position of the newest durable record of the thread.
    public internal(set) var lastPos: Int64 = 0
    private var delivered: [Int64] = [0, 0]
    private var read: [Int64] = [0, 0]

    /// The idempotency window; nil until loaded (a thread starts cold after a
    /// restart, and goes cold again when unused; see `ChatState`).
    var recent: RecentSends?
    /// Loop ms when the window was last used.
    var recentUsedAt: UInt64 = 0
    var dirty = false
    /// The participants' running unread totals (`ChatState.totalUnread`), once a state holds the thread; and what
    /// this thread has added to each (its `unread` when last counted). Every change of `committedSeq` or a read
    /// position recounts, so a total is never recomputed by walking a user's threads.
    private var tallies: (coach: UnreadTally, client: UnreadTally)?
    private var counted: (coach: Int64, client: Int64) = (0, 0)

    /// The thread as `row` holds it, its views restored.
    public init(_ row: ThreadRow) {
        id = row.id
        no = row.no
        coachID = row.coachID
        clientID = row.clientID
        createdAt = row.createdAt
        sameUser = row.coachID == row.clientID
        active = row.active
        restore(lastSeq: row.lastSeq, lastMessageAt: row.lastMessageAt, lastPreview: row.lastPreview, lastSide: row.lastSide,
                lastPos: row.lastPos, coach: (row.coach.delivered, row.coach.read),
                client: (row.client.delivered, row.client.read))
    }

    public func userID(_ side: Side) -> String { side == .coach ? coachID : clientID }

    public func side(of userID: String) -> Side? {
        if userID == coachID { return .coach }
        if userID == clientID { return .client }
        return nil
    }

    public func deliveredSeq(_ side: Side) -> Int64 { delivered[Int(side.rawValue)] }
    public func readSeq(_ side: Side) -> Int64 { read[Int(side.rawValue)] }

    /// Unread for one side: durable messages after its read position.
    public func unread(_ side: Side) -> Int64 { max(0, committedSeq - read[Int(side.rawValue)]) }

    func setLast(kind: MessageKind, body: String, attached: Bool = false) {
        lastKind = kind
        lastBody = body
        lastAttached = attached
        preview = nil
    }

    /// The previewed message was deleted: the list shows `ChatState.deletedPreview`, nothing of its words.
    func setLastDeleted() {
        lastKind = nil
        lastBody = nil
        lastAttached = false
        preview = ChatState.deletedPreview
    }

    func setPositions(_ side: Side, delivered newDelivered: Int64, read newRead: Int64) {
        delivered[Int(side.rawValue)] = newDelivered
        read[Int(side.rawValue)] = newRead
        recount()
    }

    /// The state that holds the thread gives it its participants' totals; it adds its unread to them.
    func attach(coach: UnreadTally, client: UnreadTally) {
        tallies = (coach, client)
        counted = (0, 0)
        recount()
    }

    /// The running unread total of the participant on `side`, over all their threads (nil before `attach`).
    func totalUnread(_ side: Side) -> Int64? {
        guard let tallies else { return nil }
        return side == .coach ? tallies.coach.total : tallies.client.total
    }

    /// Moves the participants' totals by what this thread's unread changed since last counted. A user who were
    /// both participants (the same id on both sides) is counted twice as the coach, as `side(of:)` answers.
    private func recount() {
        guard let tallies else { return }
        let coach = unread(.coach)
        let client = sameUser ? coach : unread(.client)
        // Wrapping: adding then taking back is exact modulo 2^64, so no sequence of changes traps.
        tallies.coach.total &+= coach &- counted.coach
        tallies.client.total &+= client &- counted.client
        counted = (coach, client)
    }

    /// Restores what a checkpoint saved.
    public func restore(lastSeq: Int64, lastMessageAt: Int64?, lastPreview: String?, lastSide: Side?, lastPos: Int64,
                        coach: (delivered: Int64, read: Int64), client: (delivered: Int64, read: Int64)) {
        self.lastSeq = lastSeq
        committedSeq = lastSeq
        self.lastMessageAt = lastMessageAt
        preview = lastPreview
        self.lastSide = lastSide
        self.lastPos = lastPos
        delivered = [coach.delivered, client.delivered]
        read = [coach.read, client.read]
        recount()
    }
}

/// One user's unread over all of their threads, kept by the threads as they change (`ChatThread.attach`).
final class UnreadTally {
    var total: Int64 = 0
}

/// The last `capacity` sends of a thread, by a hash of (side, client_message_id):
/// enough to recognise a retry without keeping the messages. A hit is only a
/// candidate: the caller reads the original from the log and compares.
struct RecentSends {
    static let capacity = 128
    private var keys: [Int] = []
    private var seqs: [Int64] = []
    private var next = 0

    static func key(_ side: Side, _ clientMessageID: String) -> Int {
        var hasher = Hasher()
        hasher.combine(side.rawValue)
        hasher.combine(clientMessageID)
        return hasher.finalize()
    }

    mutating func add(_ key: Int, seq: Int64) {
        if keys.count < RecentSends.capacity {
            keys.append(key)
            seqs.append(seq)
        } else {
            keys[next] = key
            seqs[next] = seq
            next = (next + 1) % RecentSends.capacity
        }
    }

    /// The seq of the newest send with this key, if it is in the window.
    func find(_ key: Int) -> Int64? {
        var best: Int64?
        for index in keys.indices where keys[index] == key { best = max(best ?? 0, seqs[index]) }
        return best
    }

    var count: Int { keys.count }
}

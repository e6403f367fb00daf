/// A thread as the store holds it: participants, whether it is the client's current link, and the views a
/// checkpoint saved (`ThreadSnapshot` is what it saves). A `ChatThread` starts from one (`ChatThread(_:)`); a new
/// thread's views are all at their start.
public struct ThreadRow: Sendable, Equatable {
    public let id: String
    public let no: Int64
    public let coachID: String
    public let clientID: String
    public let createdAt: Int64
    public let active: Bool
    // The views: what checkpoints save.
    public var lastSeq: Int64
    public var lastMessageAt: Int64?
    public var lastPreview: String?
    public var lastSide: Side?
    public var lastPos: Int64
    public var coach: Positions
    public var client: Positions

    public struct Positions: Sendable, Equatable {
        public let delivered: Int64
        public let read: Int64

        public init(delivered: Int64, read: Int64) {
            self.delivered = delivered
            self.read = read
        }
    }

    public init(id: String, no: Int64, coachID: String, clientID: String, createdAt: Int64, active: Bool,
                lastSeq: Int64 = 0, lastMessageAt: Int64? = nil, lastPreview: String? = nil, lastSide: Side? = nil,
                lastPos: Int64 = 0, coach: Positions = Positions(delivered: 0, read: 0),
                client: Positions = Positions(delivered: 0, read: 0)) {
        self.id = id
        self.no = no
        self.coachID = coachID
        self.clientID = clientID
        self.createdAt = createdAt
        self.active = active
        self.lastSeq = lastSeq
        self.lastMessageAt = lastMessageAt
        self.lastPreview = lastPreview
        self.lastSide = lastSide
        self.lastPos = lastPos
        self.coach = coach
        self.client = client
    }
}

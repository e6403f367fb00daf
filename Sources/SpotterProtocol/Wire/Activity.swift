#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The coach's combined activity feed (seed 002 coach §8 "Client Activity Feed": meals logged, challenges done,
// check-ins submitted, messages sent), across every current client, newest first, from the log.

/// `activity` (a coach): what their current clients did, newest first: their messages (meal logs included),
/// their changes of the coaching record (check-ins, challenge progress, joins and leaves, measurements, goals) and
/// the sessions' changes. `thread_id` narrows it to one client; `before` (an item's `cursor`) pages back;
/// `limit` 1–100 (default 20).
public struct ActivityCommand: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    public var threadId: String?
    public var before: Int64?
    public var limit: Int?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case before, limit
        case threadId = "thread_id"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
    public static let defaultLimit = 20
    public static let limits = 1...100
}

/// One item of the feed: where and when, what kind, and the item itself (`message`, `record` — the coaching
/// record's change as its `record` event carried it — or `session` with its `change`).
public struct ActivityItem: Codable, Sendable, Equatable {
    public var cursor: Int64
    public var threadId: String
    public var clientId: String
    public var at: Int64
    /// `message`, `meal_log`, `check_in`, `challenge`, `measurement`, `goal` or `session`.
    public var kind: String
    public var change: String?
    public var message: MessageView?
    public var record: RecordBody?
    public var session: SessionView?
    public init(cursor: Int64, threadId: String, clientId: String, at: Int64, kind: String, change: String? = nil,
                message: MessageView? = nil, record: RecordBody? = nil, session: SessionView? = nil) {
        self.cursor = cursor
        self.threadId = threadId
        self.clientId = clientId
        self.at = at
        self.kind = kind
        self.change = change
        self.message = message
        self.record = record
        self.session = session
    }
    enum CodingKeys: String, CodingKey {
        case cursor, at, kind, change, message, record, session
        case threadId = "thread_id"
        case clientId = "client_id"
    }
}

public struct ActivityResult: Codable, Sendable, Equatable {
    public var items: [ActivityItem]
    public var hasMore: Bool
    public init(items: [ActivityItem], hasMore: Bool) {
        self.items = items
        self.hasMore = hasMore
    }
    enum CodingKeys: String, CodingKey {
        case items
        case hasMore = "has_more"
    }
}

extension ActivityCommand: SocketCommandBody {
    public static let type = "activity"
    public func checkRanges() throws(APIError) {
        try WireRange.check(before, in: WireRange.position, field: "before")
        try WireRange.check(limit, in: WireRange.count, field: "limit")
    }
}

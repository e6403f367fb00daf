import SpotterProtocol

/// What the coach's activity feed (`activity`) lists of a thread: the client's own messages that stand (meal logs
/// included, a service's system messages not), the client's changes of their coaching record, and the sessions'
/// changes that are the thread's system messages. The SQL and the in-memory test agree.
extension LogSQL {
    public static let isClientActivity = """
        ((\(isPersonsMessage) AND \(isStanding) AND side = \(Side.client.rawValue)) \
        OR (\(isCoachingRecord) AND side = \(Side.client.rawValue)) OR (\(isSessionSystemMessage)))
        """
}

extension ChatRecord {
    /// `LogSQL.isClientActivity` for a record in memory.
    public var isClientActivity: Bool {
        switch content {
        case .message(let message): side == .client && message.kind != .system && message.deletedAt == nil
        case .coaching: side == .client
        case .session: isThreadMessage
        default: false
        }
    }
}

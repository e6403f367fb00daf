/// Cluster mode, interest by thread: a process applies another process's chat records only for the threads one of
/// whose participants is connected to it (or that its timers and consumers need). A thread it let go stays in
/// memory as it was when its first record was passed over, and is brought up to date from the store before anyone
/// here reads it again (`refresh`).
extension ChatRecord.Content {
    /// Whether the record changes only its thread's chat view (messages, receipts, edits and deletes, rating
    /// prompts): such a record may be passed over by a process with no interest in the thread. Sessions, links,
    /// tiers, the coaching record, erasures and account changes reach books read across threads (the session
    /// book's overlaps, the directory, quotas): every process applies them.
    public var concernsOnlyItsThread: Bool {
        switch self {
        case .message, .receipt, .change, .ratingPrompt: true
        case .link, .session, .tier, .coaching, .erasure, .account, .unknown: false
        }
    }
}

extension CoachingCore {
    /// Another process's chat record this process passes over (its thread is stale here): what it changes outside
    /// the thread's view is still kept right — a client's send makes their counts be read again, as `apply` does.
    public mutating func passedOver(_ record: ChatRecord) {
        guard case .message(let message) = record.content, record.side == .client, message.kind != .system,
              let thread = chat.thread(no: record.threadNo) else { return }
        forgetCounts(of: thread.clientID, ever: true)
    }

    /// Brings threads this process had let go up to date: their views as the store saved them (`stored`) and their
    /// records after the checkpoint (`tail`), read in one snapshot. Unlike `reset` (a lost append), nothing of this
    /// process's own is undone: the sessions it is making keep their bodies. What the passed-over records fed
    /// besides the thread's view moves too: the client's counts are read again, meal logs newer than what this
    /// process had applied are timed.
    public mutating func refresh(_ stored: [ChatThread], tail: [ChatRecord]) {
        for thread in stored {
            let appliedThrough = chat.thread(no: thread.no)?.lastPos ?? 0
            for record in tail where record.threadNo == thread.no && record.pos > appliedThrough {
                if case .message(let message) = record.content, message.kind == .mealLog {
                    mealTimes[thread.no, default: []].append(record.at)
                }
            }
            chat.reset(to: thread, tail: tail)
            forgetCounts(of: thread.clientID, ever: true)
        }
    }
}

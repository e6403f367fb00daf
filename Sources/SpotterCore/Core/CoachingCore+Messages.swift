import FoundationEssentials
import SpotterProtocol

// Taking a message back: `message.edit` and `message.delete` (and an admin's deletion). The decision reads the
// message from the log first (`CoreRead.original`), then makes one `change` record; the engines rewrite the
// message's row in the same transaction (`MessageForgetting`).
extension CoachingCore {
    mutating func changeMessage(_ request: MessageChangeRequest, _ context: CoreContext) throws(APIError) -> CoreDecision {
        let thread: ChatThread
        if request.byAdmin {
            guard request.text == nil, let found = chat.thread(id: request.threadID) else { throw APIError(.notFound, field: "thread_id") }
            thread = found
        } else {
            thread = try chat.participant(request.threadID, request.actorID).0
        }
        guard request.seq >= 1, request.seq <= thread.lastSeq else { throw APIError(.notFound, field: "seq") }
        guard case .read(let found) = request.target else { return .read(.original(threadNo: thread.no, seq: request.seq)) }
        // Not a person's message of this thread (a session's system message has no message record).
        guard let found, let message = found.content.message else { throw APIError(.messageNotChangeable, field: "seq") }
        if !request.byAdmin {
            guard found.side == thread.side(of: request.actorID), message.kind != .system else {
                throw APIError(.messageNotChangeable, field: "seq")
            }
        }
        let deleted = message.isDeleted || thread.deletedSeqs.contains(request.seq)
        let view = { (message: MessageRecord) in
            ChatState.messageView(message, seq: found.seq, at: found.at, threadID: thread.id,
                                  senderID: thread.userID(found.side)).jsonText
        }
        let change: MessageChangeRecord.Change
        if let text = request.text {
            guard !deleted else { throw APIError(.messageDeleted, field: "seq") }
            guard message.kind == .text else { throw APIError(.messageNotChangeable, field: "seq") }
            guard thread.active else { throw APIError(.threadInactive, field: "thread_id") }
            // Compared without subtracting the stored time (any number a row holds).
            let (earliest, overflow) = context.now.subtractingReportingOverflow(context.features.editWindowSeconds)
            guard overflow || found.at >= earliest else { throw APIError(.editWindowClosed, field: "seq") }
            if message.hasAttachments {
                let files = (try? JSONDecoder().decode(AttachedText.self, from: Data(message.body.utf8)))?.attachments ?? []
                change = .edit(body: JSONText.encoder.encodeToString(AttachedText(text: text, attachments: files)), attached: true)
            } else {
                change = .edit(body: text, attached: false)
            }
        } else {
            // Deleting a deleted message changes nothing: the tombstone is the answer.
            guard !deleted else {
                return .commit(CoreCommit(records: [], reply: .json(view(message.applying(.delete(by: .sender), at: context.now)))))
            }
            change = .delete(by: request.byAdmin ? .admin : .sender)
        }
        let record = ChatRecord(threadNo: thread.no, side: found.side, seq: thread.lastSeq, at: context.now,
                                .change(MessageChangeRecord(target: request.seq, change: change,
                                                            wasLast: isPreviewed(found, message, in: thread))))
        chat.apply(record)
        return .commit(CoreCommit(records: [record], reply: .json(view(message.applying(change, at: context.now)))))
    }

    /// Whether the message is the one the thread's list shows: known when this process applied it; after a start,
    /// the newest message whose preview and sender the list shows.
    private func isPreviewed(_ record: ChatRecord, _ message: MessageRecord, in thread: ChatThread) -> Bool {
        if let seq = thread.lastMessageSeq { return seq == record.seq }
        return thread.lastSide == record.side
            && thread.lastPreview == ChatState.preview(kind: message.kind, body: message.body, attached: message.hasAttachments)
    }
}

// An erased account: one `erasure` record, on no thread; the engines empty the user's words in the same transaction.
extension CoachingCore {
    mutating func eraseUser(_ userID: String, _ context: CoreContext) -> CoreDecision {
        let record = ChatRecord(threadNo: 0, side: .coach, seq: 0, at: context.now, .erasure(ErasureRecord(userID: userID)))
        return .commit(CoreCommit(records: [record], reply: .none))
    }

    /// What an erasure changes in memory (here or followed): the user's previews and name, a client's coaching
    /// record, meal times and counts.
    mutating func applyErasure(_ erasure: ErasureRecord) {
        for (thread, side) in chat.erase(userID: erasure.userID) where side == .client {
            coaching.forget(clientID: thread.clientID)
            mealTimes[thread.no] = nil
            forgetCounts(of: thread.clientID, ever: true)
        }
    }

    /// `user.erased`, to the other participant of each of the erased user's threads.
    func erasureEvents(_ erasure: ErasureRecord) -> [(userID: String, payload: String)] {
        chat.threads(of: erasure.userID).compactMap { thread in
            guard let side = thread.side(of: erasure.userID) else { return nil }
            return (thread.userID(side.other), UserErasedEvent(threadId: thread.id, userId: erasure.userID).jsonText)
        }
    }
}

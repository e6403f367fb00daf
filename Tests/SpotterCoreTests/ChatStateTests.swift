import Testing
import SpotterCore
import SpotterProtocol

/// The chat rules driven without sockets or SQLite: commands, committed records, events, replays.
@Suite("ChatState")
struct ChatStateTests {
    /// A coach "c" with clients "a" (thread "t1", no 1) and "b" (thread "t2", no 2, inactive).
    func makeState(warm: Bool = true) -> ChatState {
        let state = ChatState()
        state.add(ChatThread(ThreadRow(id: "t1", no: 1, coachID: "c", clientID: "a", createdAt: 100, active: true)))
        state.add(ChatThread(ThreadRow(id: "t2", no: 2, coachID: "c", clientID: "b", createdAt: 200, active: false)))
        state.setName("Coach", for: "c")
        state.setName("Amal", for: "a")
        if warm {
            state.installWindow(threadID: "t1", [])
            state.installWindow(threadID: "t2", [])
        }
        return state
    }

    /// Sends and commits (as the log would, positions counting up from `pos`).
    @discardableResult
    func send(_ state: ChatState, _ sender: String, _ cmid: String, _ text: String = "hi", thread: String = "t1",
              pos: inout Int64) throws -> ChatRecord {
        guard case .append(var record) = try state.send(
            sender: sender, threadID: thread, clientMessageID: cmid, kind: .text, body: text, now: 1000) else {
            Issue.record("expected an append")
            return ChatRecord(threadNo: 0, side: .coach, seq: 0, at: 0, .message(MessageRecord(clientMessageID: "", body: "")))
        }
        pos += 1
        record.pos = pos
        state.committed(record)
        return record
    }

    @Test func sendsGetGaplessSeqsAndOneRecordEach() throws {
        let state = makeState()
        var pos: Int64 = 0
        let first = try send(state, "a", "m1", pos: &pos)
        let second = try send(state, "c", "m2", pos: &pos)
        #expect((first.seq, second.seq) == (1, 2))
        #expect(first.content == .message(MessageRecord(clientMessageID: "m1", body: "hi")) && first.side == .client)
        #expect(second.side == .coach)
        let thread = try #require(state.thread(id: "t1"))
        #expect(thread.lastSeq == 2 && thread.committedSeq == 2 && thread.lastPos == 2)
        #expect(thread.lastPreview == "hi")
        // Writing marks the thread read for the writer.
        #expect(thread.readSeq(.coach) == 2 && thread.readSeq(.client) == 1)
        #expect(state.totalUnread("a") == 1 && state.totalUnread("c") == 0)
    }

    /// A session's change is the thread's next message: read by the side that made it, unread for both when the
    /// server made it, and a replay of the records gives the same positions.
    @Test func sessionSystemMessagesTakeTheNextSeq() throws {
        let state = makeState()
        var pos: Int64 = 0
        try send(state, "a", "m1", pos: &pos)
        let thread = try #require(state.thread(id: "t1"))
        let invite = state.sessionMessage(thread: thread, actor: .coach, sessionID: "s1", body: "{}", now: 2000)
        #expect(invite.seq == 2 && invite.content.session?.isSystemMessage == true && invite.isThreadMessage)
        let reminder = state.sessionMessage(thread: thread, actor: nil, sessionID: "s1", body: "{}", now: 3000)
        #expect(reminder.seq == 3 && thread.lastSeq == 3 && thread.lastMessageAt == 3000)
        #expect(thread.readSeq(.coach) == 2 && thread.readSeq(.client) == 1)
        // The list's preview stays the last thing a person wrote.
        #expect(thread.lastPreview == "hi")
        for var record in [invite, reminder] {
            pos += 1
            record.pos = pos
            state.committed(record)
        }
        #expect(state.totalUnread("c") == 1 && state.totalUnread("a") == 2)
        // The next send follows them.
        #expect(try send(state, "c", "m2", pos: &pos).seq == 4)

        let replayed = makeState()
        var records = [ChatRecord(threadNo: 1, side: .client, seq: 1, at: 1000, .message(MessageRecord(clientMessageID: "m1", body: "hi"))),
                       invite, reminder]
        for index in records.indices { records[index].pos = Int64(index + 1) }
        for record in records { replayed.apply(record) }
        let again = try #require(replayed.thread(id: "t1"))
        #expect(again.lastSeq == 3 && again.readSeq(.coach) == 2 && replayed.totalUnread("a") == 2)
        // A session record from before system messages took a seq moves nothing.
        replayed.apply(ChatRecord(pos: 9, threadNo: 1, side: .coach, seq: 3, at: 5000,
                                  .session(SessionRecord(sessionID: "s0", isSystemMessage: false, byParticipant: false, json: "{}"))))
        #expect(again.lastSeq == 3 && again.lastMessageAt == 3000)
    }

    @Test func outsidersAndInactiveThreadsAreRefused() throws {
        let state = makeState()
        #expect(throws: APIError(.forbidden, field: "thread_id")) {
            try state.send(sender: "b", threadID: "t1", clientMessageID: "x", kind: .text, body: "x", now: 0)
        }
        #expect(throws: APIError(.forbidden, field: "thread_id")) {
            try state.send(sender: "a", threadID: "nope", clientMessageID: "x", kind: .text, body: "x", now: 0)
        }
        #expect(throws: APIError(.threadInactive, field: "thread_id")) {
            try state.send(sender: "b", threadID: "t2", clientMessageID: "x", kind: .text, body: "x", now: 0)
        }
        #expect(throws: APIError(.forbidden, field: "thread_id")) {
            try state.receipt(userID: "b", threadID: "t1", delivered: 1, read: nil, now: 0)
        }
        #expect(state.thread(id: "t1")?.lastSeq == 0)
    }

    @Test func aColdThreadAsksForItsWindowAndThenRecognisesRetries() throws {
        let state = makeState(warm: false)
        let decision = try state.send(sender: "a", threadID: "t1", clientMessageID: "m1", kind: .text, body: "x", now: 0)
        #expect(decision == .needsWindow)
        #expect(state.thread(id: "t1")?.lastSeq == 0)  // nothing taken while cold
        state.installWindow(threadID: "t1", [(.client, "m1", 7)])
        // The same key from the same side is a candidate retry of seq 7; from the other side it is new.
        #expect(try state.send(sender: "a", threadID: "t1", clientMessageID: "m1", kind: .text, body: "x", now: 0) == .candidate(seq: 7))
        guard case .append(let record) = try state.send(sender: "c", threadID: "t1", clientMessageID: "m1", kind: .text, body: "x", now: 0)
        else { Issue.record("the coach's m1 is not the client's"); return }
        #expect(record.side == .coach)
        // Told it was not a retry after all, the send goes ahead.
        guard case .append = try state.send(sender: "a", threadID: "t1", clientMessageID: "m1", kind: .text, body: "x", now: 0,
                                            checkDuplicates: false)
        else { Issue.record("expected an append"); return }
    }

    @Test func theWindowKeepsTheNewestSendsAndGoesColdWhenIdle() throws {
        let state = makeState()
        var pos: Int64 = 0
        for n in 1...(ChatState.windowSize + 10) { try send(state, "a", "k\(n)", pos: &pos) }
        #expect(try state.send(sender: "a", threadID: "t1", clientMessageID: "k\(ChatState.windowSize + 10)", kind: .text,
                               body: "hi", now: 0) == .candidate(seq: Int64(ChatState.windowSize + 10)))
        // The oldest ten fell out of the window.
        guard case .append = try state.send(sender: "a", threadID: "t1", clientMessageID: "k1", kind: .text, body: "hi", now: 0)
        else { Issue.record("k1 is older than the window"); return }
        #expect(state.dropIdleWindows(nowMilliseconds: 10_000, idleMilliseconds: 5_000) == 2)
        #expect(state.warmThreads == 0)
        #expect(try state.send(sender: "a", threadID: "t1", clientMessageID: "new", kind: .text, body: "x", now: 0) == .needsWindow)
    }

    @Test func receiptsMoveForwardOnlyUpToTheLastSeqAndReadImpliesDelivered() throws {
        let state = makeState()
        var pos: Int64 = 0
        for n in 1...3 { try send(state, "a", "m\(n)", pos: &pos) }
        let delivered = try state.receipt(userID: "c", threadID: "t1", delivered: 2, read: nil, now: 0)
        // The read position did not move.
        #expect(delivered.record?.content == .receipt(ReceiptRecord(delivered: 2, read: 0, readMoved: false)))
        #expect(delivered.result.unread == 3 && delivered.result.totalUnread == 3)
        let read = try state.receipt(userID: "c", threadID: "t1", delivered: nil, read: 99, now: 0)
        #expect(read.result.readSeq == 3 && read.result.deliveredSeq == 3)  // capped, and delivered follows
        #expect(read.record?.content.receipt?.readMoved == true)
        #expect(read.result.unread == 0 && read.result.totalUnread == 0)
        let backwards = try state.receipt(userID: "c", threadID: "t1", delivered: 1, read: 1, now: 0)
        #expect(backwards.record == nil)
        #expect(backwards.result.readSeq == 3)
    }

    @Test func badgesCountOnlyDurableMessages() throws {
        let state = makeState()
        var pos: Int64 = 0
        try send(state, "a", "m1", pos: &pos)
        // A second send is taken but not yet committed: lists and badges do not show it.
        _ = try state.send(sender: "a", threadID: "t1", clientMessageID: "m2", kind: .text, body: "x", now: 0)
        #expect(state.thread(id: "t1")?.lastSeq == 2)
        #expect(state.totalUnread("c") == 1)
    }

    @Test func eventsOfAMessageCarryEachReadersBadge() throws {
        let state = makeState()
        var pos: Int64 = 0
        try send(state, "a", "m1", pos: &pos)
        let record = try send(state, "a", "m2", "second", pos: &pos)
        let events = Dictionary(uniqueKeysWithValues: state.events(for: record).map { ($0.userID, $0.payload) })
        #expect(events.count == 2)
        #expect(events["c"]?.contains(#""total_unread":2,"type":"message","unread":2}"#) == true, "\(events["c"] ?? "")")
        #expect(events["a"]?.contains(#""total_unread":0,"type":"message","unread":0}"#) == true)
        #expect(events["c"]?.contains(#""text":"second""#) == true)
    }

    @Test func aReceiptTellsThePeerAndTheReadersOtherDevicesOnlyWhenReadMoved() throws {
        let state = makeState()
        var pos: Int64 = 0
        try send(state, "a", "m1", pos: &pos)
        let delivered = try #require(try state.receipt(userID: "c", threadID: "t1", delivered: 1, read: nil, now: 0).record)
        #expect(state.events(for: delivered).map(\.userID) == ["a"])
        let read = try #require(try state.receipt(userID: "c", threadID: "t1", delivered: nil, read: 1, now: 0).record)
        let events = state.events(for: read)
        #expect(events.map(\.userID) == ["a", "c"])
        #expect(events[0].payload.contains(#""type":"receipt""#) && events[0].payload.contains(#""read_seq":1"#))
        #expect(events[1].payload.contains(#""type":"unread""#) && events[1].payload.contains(#""unread":0"#))
    }

    @Test func aLinkRecordTellsBothSidesWithThePeersName() throws {
        let state = makeState()
        let record = ChatRecord(pos: 9, threadNo: 2, side: .client, seq: 0, at: 0, .link(LinkChangeRecord(active: true)))
        state.apply(record)
        #expect(state.thread(id: "t2")?.active == true)
        let events = Dictionary(uniqueKeysWithValues: state.events(for: record).map { ($0.userID, $0.payload) })
        #expect(events["b"]?.contains(#""peer_id":"c","peer_name":"Coach""#) == true, "\(events)")
        #expect(events["c"]?.contains(#""active":true,"peer_id":"b""#) == true, "\(events)")
    }

    /// A restart rebuilds the state from a checkpoint and the records after it; the checkpoint may already
    /// include some of those records (it is written in parts), so replaying them must change nothing.
    @Test func replayingTheLogOverACheckpointGivesTheSameState() throws {
        let live = makeState()
        var pos: Int64 = 0
        var records: [ChatRecord] = []
        for n in 1...5 { records.append(try send(live, n % 2 == 0 ? "c" : "a", "m\(n)", "text \(n)", pos: &pos)) }
        let snapshot = live.takeDirty()
        for n in 6...8 { records.append(try send(live, "a", "m\(n)", "text \(n)", pos: &pos)) }
        var receipt = try #require(try live.receipt(userID: "c", threadID: "t1", delivered: nil, read: 7, now: 0).record)
        pos += 1
        receipt.pos = pos
        live.committed(receipt)
        records.append(receipt)

        // Restore the snapshot (taken after record 5) and replay from record 3 on: 3–5 are in it already.
        let restarted = makeState(warm: false)
        let saved = try #require(snapshot.first { $0.no == 1 })
        restarted.thread(no: 1)?.restore(
            lastSeq: saved.lastSeq, lastMessageAt: saved.lastMessageAt, lastPreview: saved.lastPreview, lastSide: saved.lastSide,
            lastPos: 5, coach: (saved.coachDelivered, saved.coachRead), client: (saved.clientDelivered, saved.clientRead))
        for record in records.dropFirst(2) { restarted.apply(record) }
        let a = try #require(live.thread(id: "t1")), b = try #require(restarted.thread(id: "t1"))
        #expect(b.lastSeq == a.lastSeq && b.committedSeq == a.committedSeq && b.lastPos == a.lastPos)
        #expect(b.lastPreview == a.lastPreview && b.lastSide == a.lastSide)
        for side in [Side.coach, Side.client] {
            #expect(b.readSeq(side) == a.readSeq(side) && b.deliveredSeq(side) == a.deliveredSeq(side))
        }
        #expect(restarted.totalUnread("c") == live.totalUnread("c"))
        #expect(restarted.lastPos(of: "c") == pos)
    }

    @Test func checkpointsTakeEachChangedThreadOnce() throws {
        let state = makeState()
        var pos: Int64 = 0
        try send(state, "a", "m1", pos: &pos)
        try send(state, "c", "m2", pos: &pos)
        let taken = state.takeDirty()
        #expect(taken.map(\.no) == [1])
        #expect(taken.first?.lastSeq == 2 && taken.first?.lastSide == .coach && taken.first?.coachRead == 2)
        #expect(state.takeDirty().isEmpty)
        state.markDirty(no: 1)
        #expect(state.takeDirty().map(\.no) == [1])
    }

    @Test func previewsOfMealCardsAndLongTexts() throws {
        #expect(ChatState.preview(kind: .mealLog, body: #"{"calories":1,"carbs_g":1,"fats_g":1,"ingredients":[],"meal_type":"lunch","name":"Rice","protein_g":1}"#)
                == "🍽 Rice")
        #expect(ChatState.preview(kind: .text, body: "line one\nline two") == "line one line two")
        #expect(ChatState.preview(kind: .text, body: String(repeating: "ب", count: 300)).count == MessageRules.maxPreviewCharacters)
    }
}

extension ChatStateTests {
    /// A checkpoint saves the last committed seq, not one given to a send still in flight: that send may be lost
    /// (a conflict, a full disk), and a view claiming its seq would make the next send after a rebuild skip one.
    @Test func aCheckpointSavesOnlyCommittedSeqs() throws {
        let state = makeState()
        var pos: Int64 = 0
        _ = try send(state, "a", "m1", "one", pos: &pos)
        _ = state.takeDirty()
        guard case .append(let inFlight) = try state.send(sender: "a", threadID: "t1", clientMessageID: "m2", kind: .text,
                                                           body: "two", now: 0) else { Issue.record("not sent"); return }
        #expect(state.takeDirty().first { $0.no == 1 }?.lastSeq == 1, "a seq in flight was saved")
        var done = inFlight
        done.pos = pos + 1
        state.committed(done)
        #expect(state.takeDirty().first { $0.no == 1 }?.lastSeq == 2, "the commit must mark the thread for the next checkpoint")
    }
}

/// A checkpoint's snapshot saves the committed seq, and the read and delivered positions no further than it: a
/// writer reads their own message when it is decided, before it is durable (the simulator's finding 6).
@Test func aCheckpointSavesPositionsNoFurtherThanTheCommittedSeq() throws {
    let state = ChatState()
    state.add(ChatThread(ThreadRow(id: "t1", no: 1, coachID: "k", clientID: "c", createdAt: 0, active: true, lastSeq: 0,
                                   lastMessageAt: nil, lastPreview: nil, lastSide: nil, lastPos: 0,
                                   coach: .init(delivered: 0, read: 0), client: .init(delivered: 0, read: 0))))
    state.installWindow(threadID: "t1", [])
    guard case .append(var record) = try state.send(sender: "c", threadID: "t1", clientMessageID: "m", kind: .text,
                                                    body: "hi", now: 1) else { return #expect(Bool(false)) }
    #expect(state.thread(no: 1)?.readSeq(.client) == 1)  // the writer has read it, in memory
    let inFlight = try #require(state.takeDirty().first)
    #expect(inFlight.lastSeq == 0 && inFlight.clientRead == 0 && inFlight.clientDelivered == 0)
    record.pos = 1
    state.committed(record)
    let durable = try #require(state.takeDirty().first)
    #expect(durable.lastSeq == 1 && durable.clientRead == 1 && durable.clientDelivered == 1)
}

import Foundation
import Testing
import SpotterCore
import SpotterPorts
import SpotterProtocol
import SpotterStore

/// A database written by main at ceb039e, before records had typed bodies (`Tests/fixtures/README.md` says how it
/// was made): the log's rows as they stand in every deployed database read back, through today's code, as the
/// right typed body with the right values, and a start builds the same views the old server saved.
@Suite("A log written before typed records", .serialized)
struct LogFixtureTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures/log-ceb039e.sqlite").path

    static let at: Int64 = 1_795_696_059
    static let coach = "af423e12-31d4-4150-b72f-4edd96c7554a"
    static let client = "3d5632ee-d099-4437-9d72-85d3367e9e86"
    static let completed = "201581c2-2334-446a-b29e-16f5c58912f8"
    static let cancelled = "a7a9d42b-249a-4997-8e6f-cf1bcc192f89"
    static let measurement = "32cd4dc0-f0ae-45b2-bc07-66a861a2c1e9"

    /// A copy of the fixture opened as a server opens its database (the fixture itself stays as it is).
    static func open() throws -> (ChatLog, StoreWriter, String) {
        let directory = NSTemporaryDirectory() + "spotter-fixture-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: fixture, toPath: directory + "/spotter.sqlite")
        let store = try Store.open(directory: directory)
        let writer = StoreWriter(store: store)
        return (ChatLog(store: store, writer: writer), writer, directory)
    }

    static func message(_ ref: String, _ body: String, kind: MessageKind = .text, attached: Bool = false) -> ChatRecord.Content {
        .message(MessageRecord(kind: kind, clientMessageID: ref, body: body, hasAttachments: attached))
    }

    /// Every record the old server wrote, in log order: (thread, side, seq, body). Sessions and the coaching
    /// change are checked apart, their JSON decoded.
    static let expected: [(Int64, Side, Int64, ChatRecord.Content?)] = [
        (1, .client, 0, .link(LinkChangeRecord(active: true))),  // the client picked coach X
        (1, .client, 1, message("m1", "مرحبا coach 👋")),
        (1, .client, 2, nil),  // the meal log, below
        (1, .coach, 2, .receipt(ReceiptRecord(delivered: 2, read: 0, readMoved: false))),
        (1, .coach, 3, message("c1", "Good start")),
        (1, .client, 3, .receipt(ReceiptRecord(delivered: 3, read: 3, readMoved: true))),
        (1, .client, 3, .tier(TierRecord(tier: "smart_premium"))),
        (1, .client, 4, nil),  // the text with a picture, below
        (1, .client, 5, message("plan-1", "Workout plan generated", kind: .system)),  // a service's, with its key
    ] + (3...9).map { n in (1, .client, Int64(n + 3), message("m\(n)", "message \(n)")) } + [
        (1, .client, 12, .ratingPrompt(.afterMessages(sent: 10))),
        (1, .coach, 13, nil), (1, .client, 14, nil), (1, .coach, 15, nil), (1, .coach, 16, nil),  // the session's life
        (1, .client, 16, .ratingPrompt(.afterSession(sessionID: completed))),
        (1, .client, 16, nil),  // the measurement
        (1, .coach, 17, nil),  // a second invite
        (1, .client, 17, .link(LinkChangeRecord(active: false))),  // the coach change approved: X's thread ends…
        (2, .client, 0, .link(LinkChangeRecord(active: true))),  // …and Y's begins
        (1, .coach, 18, nil),  // the second invite, cancelled by the server with the link
    ]

    @Test func everyRecordReadsBackAsItsTypedBody() throws {
        let (log, writer, directory) = try Self.open()
        defer { writer.stop(); try? FileManager.default.removeItem(atPath: directory) }
        let records = try log.recordsAfter(0, through: nil, limit: 100)
        try #require(records.count == Self.expected.count)
        #expect(records.map(\.pos) == Array(1...Int64(Self.expected.count)))
        #expect(records.allSatisfy { $0.at == Self.at })
        for (record, (thread, side, seq, content)) in zip(records, Self.expected) {
            #expect(record.threadNo == thread && record.side == side && record.seq == seq, "at \(record.pos)")
            if let content { #expect(record.content == content, "at \(record.pos)") }
        }

        // The meal log: a message of kind meal_log whose body is the card.
        let meal = try #require(records[2].content.message)
        #expect(meal.kind == .mealLog && meal.clientMessageID == "m2" && !meal.hasAttachments)
        #expect(try JSONDecoder().decode(MealLog.self, from: Data(meal.body.utf8)).name == "Oats")
        // The text with a picture, as the clients see it.
        let attached = try #require(records[7].content.message)
        #expect(attached.hasAttachments && attached.clientMessageID == "a1")
        let view = try #require(ChatState.messageView(records[7], threadID: "t", senderID: Self.client))
        #expect(view.text == "Form check" && view.attachments?.map(\.type) == ["image/png"])

        // The sessions: who made each change, whether it is the thread's system message, and its body.
        let sessions: [(Int, String, Bool, String)] = [
            (17, Self.completed, true, "created"), (18, Self.completed, true, "accept"), (19, Self.completed, true, "coach_joined"),
            (20, Self.completed, true, "complete"), (23, Self.cancelled, true, "created"), (26, Self.cancelled, false, "cancel"),
        ]
        for (index, id, byParticipant, change) in sessions {
            let session = try #require(records[index].content.session, "at \(index + 1)")
            #expect(session.sessionID == id && session.isSystemMessage && session.byParticipant == byParticipant, "at \(index + 1)")
            let body = try #require(SessionRecordBody(records[index]), "at \(index + 1)")
            #expect(body.change == change && body.session.id == id, "at \(index + 1)")
            #expect(records[index].isThreadMessage)
        }
        #expect(SessionRecordBody(records[26])?.session.cancelReason == "link_ended")

        // The coaching change: the measurement, by the client.
        let change = try #require(records[22].content.coaching)
        #expect(change.itemID == Self.measurement)
        #expect(RecordBody(records[22])?.measurement?.bodyFatPercent == 19.3)
    }

    /// A start on the old database: the views the old server saved are what applying the records in today's
    /// code gives, and the books (sessions, coaching record, meal times) read their records.
    @Test func aStartReadsTheSameViewsTheOldServerSaved() throws {
        let (log, writer, directory) = try Self.open()
        defer { writer.stop(); try? FileManager.default.removeItem(atPath: directory) }
        let loaded = try log.load()
        #expect(loaded.tail.isEmpty && loaded.position == 27)  // the old server checkpointed everything
        #expect(loaded.sessions.map(\.id) == [Self.completed, Self.cancelled])
        #expect(loaded.sessions.map(\.status) == [.completed, .cancelled])
        #expect(loaded.coaching.measurements(of: Self.client).map(\.id) == [Self.measurement])
        #expect(loaded.mealTimes == [1: [Self.at]])

        // Every record applied to the threads as they were before the first: the saved views.
        let replayed = ChatState()
        for row in loaded.threads {
            replayed.add(ChatThread(ThreadRow(id: row.id, no: row.no, coachID: row.coachID, clientID: row.clientID,
                                              createdAt: row.createdAt, active: false)))
        }
        for record in try log.recordsAfter(0, through: nil, limit: 100) { replayed.apply(record) }
        for row in loaded.threads {
            let thread = try #require(replayed.thread(no: row.no))
            #expect(thread.lastSeq == row.lastSeq && thread.active == row.active, "thread \(row.no)")
            #expect(thread.readSeq(.coach) == row.coach.read && thread.readSeq(.client) == row.client.read, "thread \(row.no)")
            #expect(thread.deliveredSeq(.coach) == row.coach.delivered, "thread \(row.no)")
            #expect(thread.lastPreview == row.lastPreview, "thread \(row.no)")
        }
        #expect(loaded.threads.map(\.lastSeq) == [18, 0] && loaded.threads.map(\.active) == [false, true])

        // The reads a client makes: the history with its sessions' system messages, the meal logs.
        let history = try log.history(threadNo: 1, beforeSeq: nil, limit: 100)
        #expect(history.map(\.seq) == Array((1...18).reversed()))
        #expect(history.filter { $0.content.session != nil }.count == 6)
        #expect(try log.meals(threadNos: [1, 2], before: nil, limit: 10).map(\.content.message?.clientMessageID) == ["m2"])
    }
}

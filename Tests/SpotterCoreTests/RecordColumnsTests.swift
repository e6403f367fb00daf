import Testing
import SpotterCore

/// The typed bodies and the log's columns (`ChatRecord+Columns.swift`): each kind's body is stored in exactly the
/// columns every database holds, reads back the same, and a row that holds what it should not reads as a defined
/// fallback.
@Suite("Record bodies in the log's columns")
struct RecordColumnsTests {
    typealias Columns = ChatRecord.Columns

    /// Each kind's body, the columns that store it (as databases written before typed records hold them) and back.
    static let stored: [(ChatRecord.Content, Columns)] = [
        (.message(MessageRecord(clientMessageID: "m1", body: "hi")), Columns(kind: 0, a: 0, b: 0, ref: "m1", body: "hi")),
        (.message(MessageRecord(kind: .mealLog, clientMessageID: "m2", body: #"{"name":"Oats"}"#)),
         Columns(kind: 0, a: 1, b: 0, ref: "m2", body: #"{"name":"Oats"}"#)),
        (.message(MessageRecord(kind: .system, clientMessageID: "plan-1", body: "Plan ready")),
         Columns(kind: 0, a: 2, b: 0, ref: "plan-1", body: "Plan ready")),
        (.message(MessageRecord(clientMessageID: "a1", body: #"{"text":"Form"}"#, hasAttachments: true)),
         Columns(kind: 0, a: 0, b: 1, ref: "a1", body: #"{"text":"Form"}"#)),
        (.receipt(ReceiptRecord(delivered: 5, read: 3, readMoved: true)), Columns(kind: 1, a: 5, b: 3, ref: "read")),
        (.receipt(ReceiptRecord(delivered: 5, read: 0, readMoved: false)), Columns(kind: 1, a: 5, b: 0)),
        (.link(LinkChangeRecord(active: true)), Columns(kind: 2, a: 1)),
        (.link(LinkChangeRecord(active: false)), Columns(kind: 2, a: 0)),
        (.session(SessionRecord(sessionID: "s1", isSystemMessage: true, byParticipant: true, json: "{}")),
         Columns(kind: 3, a: 1, b: 1, ref: "s1", body: "{}")),
        (.session(SessionRecord(sessionID: "s1", isSystemMessage: true, byParticipant: false, json: "{}")),
         Columns(kind: 3, a: 1, b: 0, ref: "s1", body: "{}")),
        (.session(SessionRecord(sessionID: "s0", isSystemMessage: false, byParticipant: true, json: "{}")),
         Columns(kind: 3, a: 0, b: 1, ref: "s0", body: "{}")),
        (.ratingPrompt(.afterMessages(sent: 20)), Columns(kind: 4, a: 20)),
        (.ratingPrompt(.afterSession(sessionID: "s1")), Columns(kind: 4, a: 0, ref: "s1")),
        (.tier(TierRecord(tier: "smart_premium")), Columns(kind: 5, ref: "smart_premium")),
        (.coaching(CoachingChangeRecord(itemID: "g1", json: #"{"change":"goal.created"}"#)),
         Columns(kind: 6, ref: "g1", body: #"{"change":"goal.created"}"#)),
        // A message edited (bit 1) or deleted (bit 2), with the time of the change from bit 8 up.
        (.message(MessageRecord(clientMessageID: "e1", body: "fixed", editedAt: 1_800_000_000)),
         Columns(kind: 0, a: 0, b: 2 | (1_800_000_000 << 8), ref: "e1", body: "fixed")),
        (.message(MessageRecord(clientMessageID: "e2", body: #"{"text":"x"}"#, hasAttachments: true, editedAt: 5)),
         Columns(kind: 0, a: 0, b: 1 | 2 | (5 << 8), ref: "e2", body: #"{"text":"x"}"#)),
        (.message(MessageRecord(kind: .mealLog, clientMessageID: "d1", body: "", deletedAt: 1_800_000_001)),
         Columns(kind: 0, a: 1, b: 4 | (1_800_000_001 << 8), ref: "d1", body: "")),
        (.change(MessageChangeRecord(target: 3, change: .edit(body: "fixed", attached: false), wasLast: true)),
         Columns(kind: 7, a: 3, b: 1, body: "fixed")),
        (.change(MessageChangeRecord(target: 3, change: .edit(body: nil, attached: true), wasLast: false)),
         Columns(kind: 7, a: 3, b: 4)),
        (.change(MessageChangeRecord(target: 9, change: .delete(by: .admin), wasLast: false)), Columns(kind: 7, a: 9, b: 2 | (1 << 4))),
        (.change(MessageChangeRecord(target: 9, change: .delete(by: .erasure), wasLast: true)), Columns(kind: 7, a: 9, b: 1 | 2 | (2 << 4))),
        (.erasure(ErasureRecord(userID: "u1")), Columns(kind: 8, ref: "u1")),
    ]

    @Test func eachKindIsStoredInItsColumnsAndReadsBackTheSame() {
        for (content, columns) in Self.stored {
            #expect(content.columns == columns, "\(content)")
            #expect(ChatRecord.Content(columns: columns) == content, "\(columns)")
            let record = ChatRecord(pos: 7, threadNo: 3, side: .coach, seq: 9, at: 100, content)
            let read = ChatRecord(pos: 7, threadNo: 3, side: Side.coach.rawValue, seq: 9, at: 100, columns: record.content.columns)
            #expect(read == record)
        }
        // Every kind is covered above.
        let kinds = Set(Self.stored.compactMap { $0.0.kind?.rawValue })
        #expect(kinds == Set((0...8) as ClosedRange<Int64>))
    }

    @Test func aKindThisVersionDoesNotKnowIsKeptAsStored() {
        let columns = Columns(kind: 42, a: 7, b: -1, ref: "future", body: #"{"v":2}"#)
        let content = ChatRecord.Content(columns: columns)
        #expect(content == .unknown(columns) && content.kind == nil)
        #expect(content.columns == columns)  // written back (a copy of the log) unchanged
        let record = ChatRecord(pos: 3, threadNo: 1, side: 1, seq: 2, at: 0, columns: columns)
        #expect(!record.isThreadMessage && record.kind == nil)
    }

    @Test func valuesARowShouldNotHoldReadAsDefinedFallbacks() {
        // A message of an unknown message kind is a text; bits of `b` it does not know are ignored; a deleted one
        // has no attachments whatever its bit 0 says; missing texts are empty; a time past 2^54 is clamped.
        #expect(ChatRecord.Content(columns: Columns(kind: 0, a: 9, b: 8 | 16 | 32, ref: nil, body: nil))
            == .message(MessageRecord(kind: .text, clientMessageID: "", body: "", hasAttachments: false)))
        #expect(ChatRecord.Content(columns: Columns(kind: 0, a: 0, b: 7, ref: nil, body: nil))
            == .message(MessageRecord(kind: .text, clientMessageID: "", body: "", hasAttachments: false, deletedAt: 0)))
        #expect(ChatRecord.Columns.messageFlags(attachments: false, editedAt: .max, deletedAt: nil) == 2 | ((1 << 54) << 8))
        #expect(ChatRecord.Columns.messageFlags(attachments: true, editedAt: nil, deletedAt: .min) == 4)
        // A change's deleter it does not know reads as the sender; an erasure without its user names no one.
        #expect(ChatRecord.Content(columns: Columns(kind: 7, a: 1, b: 2 | (3 << 4)))
            == .change(MessageChangeRecord(target: 1, change: .delete(by: .sender), wasLast: false)))
        #expect(ChatRecord.Content(columns: Columns(kind: 8)) == .erasure(ErasureRecord(userID: "")))
        // A receipt's ref other than "read": the read position did not move.
        #expect(ChatRecord.Content(columns: Columns(kind: 1, a: 4, b: 2, ref: "READ"))
            == .receipt(ReceiptRecord(delivered: 4, read: 2, readMoved: false)))
        // A link flag other than 1: ended.
        #expect(ChatRecord.Content(columns: Columns(kind: 2, a: 2)) == .link(LinkChangeRecord(active: false)))
        // A session's `a` other than 1 is no system message; missing id and body are empty (the body decodes to nothing).
        #expect(ChatRecord.Content(columns: Columns(kind: 3, a: 5, b: 3))
            == .session(SessionRecord(sessionID: "", isSystemMessage: false, byParticipant: false, json: "")))
        // A tier record without a tier: freemium; a coaching record without a body: an empty object.
        #expect(ChatRecord.Content(columns: Columns(kind: 5)) == .tier(TierRecord(tier: "freemium")))
        #expect(ChatRecord.Content(columns: Columns(kind: 6)) == .coaching(CoachingChangeRecord(itemID: nil, json: "{}")))
        // A side other than the two: the client.
        let record = ChatRecord(pos: 1, threadNo: 1, side: 5, seq: 1, at: 0, columns: Columns(kind: 2, a: 1))
        #expect(record.side == .client)
    }

    /// A row of an unknown kind applied to the state and the core (a newer server's record, followed or replayed)
    /// moves nothing but the thread's position and makes no event.
    @Test func theRulesIgnoreAnUnknownRecord() {
        let state = ChatState()
        let thread = state.add(ChatThread(ThreadRow(id: "t1", no: 1, coachID: "k", clientID: "a", createdAt: 0, active: true)))
        let record = ChatRecord(pos: 5, threadNo: 1, side: 1, seq: 0, at: 0, columns: Columns(kind: 42, a: 1, b: 1, ref: "x"))
        state.apply(record)
        #expect(thread.lastSeq == 0 && thread.active && thread.lastPos == 5)
        #expect(state.events(for: record).isEmpty)
        #expect(CoachingCore.recovery(after: [record], clustered: true) == .everything)
    }
}

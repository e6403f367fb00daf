import Foundation
import Testing
import SpotterProtocol
@testable import SpotterCore

/// Committed records → webhook events (issue 29): which records make which events, ids stable across redelivery,
/// payloads with ids and no names; the signature; what an admin may register.
@Suite("Webhook events, signature and rules")
struct WebhookEventsTests {
    static let thread = WebhookThread(id: "T-1", coachID: "K", clientID: "C")
    static let at: Int64 = 1_737_374_400

    static func events(_ record: ChatRecord) -> [WebhookEvent] { WebhookEvents.events(for: record, thread: thread) }

    static func json(_ event: WebhookEvent) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(event.payload.utf8)) as? [String: Any])
    }

    static func data(_ event: WebhookEvent) throws -> [String: Any] {
        try #require(try json(event)["data"] as? [String: Any])
    }

    static func session(_ status: SessionStatus, start: Int64 = at + 3600) -> Session {
        Session(id: "S", threadID: "T-1", coachID: "K", clientID: "C", start: start, durationMinutes: 30,
                purpose: "Sara's knee", meetURL: "https://meet.example/x", status: status, cancelReason: "Sara is ill")
    }

    static func change(_ action: SessionAction?, from before: Session?, to after: Session, pos: Int64 = 20) throws -> ChatRecord {
        let body = SessionRecordBody(change: action?.rawValue ?? "created", actor: .coach, action: action, before: before, after: after)
        return ChatRecord(pos: pos, threadNo: 1, side: .coach, seq: 9, at: at,
                          .session(SessionRecord(sessionID: "S", byParticipant: true,
                                                 json: String(decoding: try JSONEncoder().encode(body), as: UTF8.self))))
    }

    @Test func aMessageMakesMessageCreatedWithItsTextAndIds() throws {
        let record = ChatRecord(pos: 42, threadNo: 1, side: .client, seq: 7, at: Self.at,
                                .message(MessageRecord(clientMessageID: "m-1", body: "مرحبا \"coach\"\n👋")))
        let made = Self.events(record)
        #expect(made.count == 1)
        let event = try #require(made.first)
        #expect(event.id == "evt_42_message.created" && event.type == .messageCreated && event.pos == 42)
        #expect(event.threadID == "T-1" && event.seq == 7 && event.createdAt == Self.at)
        let json = try Self.json(event)
        #expect(json["id"] as? String == event.id && json["type"] as? String == "message.created")
        #expect(json["created_at"] as? Int == Int(Self.at))
        let data = try Self.data(event)
        #expect(data["text"] as? String == "مرحبا \"coach\"\n👋" && data["sender_id"] as? String == "C" && event.senderID == "C")
        #expect(data["thread_id"] as? String == "T-1" && data["seq"] as? Int == 7 && data["coach_id"] as? String == "K")
        #expect(data["client_id"] as? String == "C" && data["client_message_id"] as? String == "m-1" && data["kind"] as? String == "text")
        // The same record handed over again makes the same bytes.
        #expect(Self.events(record) == made)
    }

    @Test func attachmentsMealsAndSystemMessages() throws {
        let attached = try JSONEncoder().encode(AttachedText(text: "photo", attachments: [AttachmentView(id: "A1", type: "image/jpeg", bytes: 9)]))
        let withFile = ChatRecord(pos: 1, threadNo: 1, side: .client, seq: 1, at: Self.at,
                                  .message(MessageRecord(clientMessageID: "a", body: String(decoding: attached, as: UTF8.self), hasAttachments: true)))
        let data = try Self.data(try #require(Self.events(withFile).first))
        #expect(data["text"] as? String == "photo" && data["attachment_ids"] as? [String] == ["A1"])
        let system = ChatRecord(pos: 2, threadNo: 1, side: .client, seq: 2, at: Self.at,
                                .message(MessageRecord(kind: .system, clientMessageID: "s", body: "Plan ready")))
        let systemData = try Self.data(try #require(Self.events(system).first))
        #expect(systemData["sender_id"] == nil && systemData["kind"] as? String == "system")
    }

    @Test func sessionChangesMapToTheirEvents() throws {
        let invited = Self.session(.invited)
        let scheduled = Self.session(.scheduled)
        func type(_ action: SessionAction?, _ before: Session?, _ after: Session) throws -> [WebhookEventType] {
            Self.events(try Self.change(action, from: before, to: after)).map(\.type)
        }
        #expect(try type(nil, nil, invited) == [])                                  // an invite: nothing yet
        #expect(try type(.accept, invited, scheduled) == [.sessionScheduled])
        #expect(try type(.reschedule, scheduled, Self.session(.rescheduleRequested)) == [])
        let moved = Self.session(.scheduled, start: Self.at + 7200)
        #expect(try type(.accept, Self.session(.rescheduleRequested), moved) == [.sessionRescheduled])
        #expect(try type(.decline, Self.session(.rescheduleRequested), scheduled) == [])   // same start: nothing moved
        #expect(try type(.cancel, scheduled, Self.session(.cancelled)) == [.sessionCancelled])
        #expect(try type(nil, nil, Self.session(.needsResolution)) == [.sessionNeedsResolution])
        #expect(try type(.askReschedule, Self.session(.needsResolution), Self.session(.needsResolution)) == [])
        #expect(try type(.replaceExisting, Self.session(.needsResolution), scheduled) == [.sessionScheduled])
        #expect(try type(.complete, Self.session(.inProgress), Self.session(.completed)) == [.sessionCompleted])
        #expect(try type(.join, scheduled, Self.session(.inProgress)) == [])

        let event = try #require(Self.events(try Self.change(.cancel, from: scheduled, to: Self.session(.cancelled), pos: 77)).first)
        #expect(event.id == "evt_77_session.cancelled" && event.seq == nil)
        let data = try Self.data(event)
        #expect(data["session_id"] as? String == "S" && data["status"] as? String == "cancelled")
        #expect(data["previous_status"] as? String == "scheduled" && data["start"] as? Int == Int(Self.at + 3600))
        // No free text that could name someone: neither the purpose nor the cancel reason.
        #expect(!event.payload.contains("Sara"))
    }

    @Test func tierAndCoachingRecords() throws {
        let tier = ChatRecord(pos: 5, threadNo: 1, side: .client, seq: 3, at: Self.at, .tier(TierRecord(tier: "premium")))
        let tierEvent = try #require(Self.events(tier).first)
        #expect(tierEvent.type == .tierChanged && tierEvent.id == "evt_5_tier.changed")
        let tierData = try Self.data(tierEvent)
        #expect(tierData["tier"] as? String == "premium" && tierData["client_id"] as? String == "C")

        func coaching(_ change: String, item: String, pos: Int64) throws -> ChatRecord {
            let json = String(decoding: try JSONEncoder().encode(RecordBody(change: change)), as: UTF8.self)
            return ChatRecord(pos: pos, threadNo: 1, side: .client, seq: 3, at: Self.at, .coaching(CoachingChangeRecord(itemID: item, json: json)))
        }
        let checkIn = try #require(Self.events(try coaching("check_in.created", item: "CI", pos: 6)).first)
        let checkInData = try Self.data(checkIn)
        #expect(checkIn.type == .checkInCreated && checkInData["item_id"] as? String == "CI")
        #expect(Self.events(try coaching("measurement.created", item: "M", pos: 7)).map(\.type) == [.measurementCreated])
        #expect(Self.events(try coaching("check_in.commented", item: "CI", pos: 8)).isEmpty)
        #expect(Self.events(try coaching("goal.created", item: "G", pos: 9)).isEmpty)
        // A body this server cannot read makes nothing (rather than a half event).
        #expect(Self.events(ChatRecord(pos: 10, threadNo: 1, side: .client, seq: 3, at: Self.at,
                                       .coaching(CoachingChangeRecord(itemID: "X", json: "{not json")))).isEmpty)
    }

    @Test func aDeletionMakesMessageDeletedWithoutTextAndAnEditNothing() throws {
        let delete = ChatRecord(pos: 50, threadNo: 1, side: .client, seq: 9, at: Self.at,
                                .change(MessageChangeRecord(target: 4, change: .delete(by: .admin), wasLast: false)))
        let event = try #require(Self.events(delete).first)
        #expect(event.id == "evt_50_message.deleted" && event.type == .messageDeleted && event.seq == 4 && event.threadID == "T-1")
        let data = try Self.data(event)
        #expect(data["seq"] as? Int == 4 && data["by"] as? String == "admin" && data["sender_id"] as? String == "C")
        #expect(data["text"] == nil)
        let edit = ChatRecord(pos: 51, threadNo: 1, side: .client, seq: 9, at: Self.at,
                              .change(MessageChangeRecord(target: 4, change: .edit(body: "secret edit", attached: false), wasLast: true)))
        #expect(Self.events(edit).isEmpty)
        // Both make the outbox forget the message's text; an erasure, every message of the user.
        #expect(WebhookEvents.forgetting(delete, thread: Self.thread) == .message(threadID: "T-1", seq: 4))
        #expect(WebhookEvents.forgetting(edit, thread: Self.thread) == .message(threadID: "T-1", seq: 4))
        #expect(WebhookEvents.forgetting(ChatRecord(pos: 52, threadNo: 0, side: .coach, seq: 0, at: Self.at,
                                                    .erasure(ErasureRecord(userID: "C"))), thread: nil) == .sender(userID: "C"))
        // A message read back after it was deleted: its event goes, without the text.
        let gone = ChatRecord(pos: 3, threadNo: 1, side: .client, seq: 4, at: Self.at,
                              .message(MessageRecord(clientMessageID: "x", body: "", deletedAt: Self.at + 5)))
        let goneData = try Self.data(try #require(Self.events(gone).first))
        #expect(goneData["deleted"] as? Bool == true && goneData["text"] == nil)
    }

    @Test func anErasureMakesUserErasedWithTheUserIdOnly() throws {
        let erasure = ChatRecord(pos: 60, threadNo: 0, side: .coach, seq: 0, at: Self.at, .erasure(ErasureRecord(userID: "U-9")))
        #expect(!WebhookEvents.needsThread(erasure))
        let event = try #require(WebhookEvents.events(for: erasure, thread: nil).first)
        #expect(event.id == "evt_60_user.erased" && event.type == .userErased && event.seq == nil)
        #expect(try Self.data(event) as NSDictionary == ["user_id": "U-9"] as NSDictionary)
        // A record of a thread the consumer could not find makes nothing rather than an event without its ids.
        let message = ChatRecord(pos: 61, threadNo: 3, side: .client, seq: 1, at: Self.at, .message(MessageRecord(clientMessageID: "m", body: "x")))
        #expect(WebhookEvents.needsThread(message) && WebhookEvents.events(for: message, thread: nil).isEmpty)
    }

    @Test func otherRecordsMakeNone() {
        let records: [ChatRecord.Content] = [
            .receipt(ReceiptRecord(delivered: 1, read: 1, readMoved: true)), .link(LinkChangeRecord(active: true)),
            .ratingPrompt(.afterMessages(sent: 10)),
        ]
        for content in records {
            #expect(Self.events(ChatRecord(pos: 3, threadNo: 1, side: .client, seq: 1, at: Self.at, content)).isEmpty)
        }
    }

    // MARK: The signature

    @Test func theSignatureIsHMACSHA256OfTimestampDotBody() {
        // Computed independently: python3 -c "import hmac,hashlib; print(hmac.new(b'whsec_test', b'1700000000.{\"a\":1}', hashlib.sha256).hexdigest())"
        let body = Array(#"{"a":1}"#.utf8)
        #expect(WebhookSignature.value(secret: "whsec_test", timestamp: 1_700_000_000, body: body)
                == "t=1700000000,v1=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789")
    }

    @Test func verificationRefusesWrongSecretsBodiesAndOldTimestamps() {
        let body = Array(#"{"a":1}"#.utf8)
        let now: Int64 = 1_700_000_000
        let header = WebhookSignature.value(secret: "s1", timestamp: now, body: body)
        #expect(WebhookSignature.verify(header: header, secret: "s1", body: body, now: now + 300))
        #expect(!WebhookSignature.verify(header: header, secret: "s2", body: body, now: now))
        #expect(!WebhookSignature.verify(header: header, secret: "s1", body: body + [0x20], now: now))
        #expect(!WebhookSignature.verify(header: header, secret: "s1", body: body, now: now + 301))
        #expect(!WebhookSignature.verify(header: header, secret: "s1", body: body, now: now - 301))
        #expect(!WebhookSignature.verify(header: "v1=abc", secret: "s1", body: body, now: now))
        #expect(!WebhookSignature.verify(header: "t=-9223372036854775808,v1=00", secret: "s1", body: body, now: now))
        #expect(!WebhookSignature.verify(header: "", secret: "s1", body: body, now: now))
        // During a rotation a receiver may be sent two signatures: either matching is enough.
        let both = header + ",v1=" + WebhookSignature.mac(secret: "s2", timestamp: now, body: body)
        #expect(WebhookSignature.verify(header: both, secret: "s2", body: body, now: now))
    }

    // MARK: Registration rules

    @Test func urlsAreHTTPSOnlyOutsideDevelopment() throws {
        #expect(try WebhookRules.url("https://hooks.example.com/spotter?x=1", development: false) == "https://hooks.example.com/spotter?x=1")
        #expect(try WebhookRules.url("https://10.0.0.5:8443/in", development: false) == "https://10.0.0.5:8443/in")
        func refused(_ url: String?, development: Bool = false) -> String? {
            do { _ = try WebhookRules.url(url, development: development); return nil } catch { return error.code.rawValue }
        }
        #expect(refused("http://hooks.example.com/") == "invalid_webhook_url")
        #expect(refused("http://127.0.0.1:9000/", development: true) == nil)
        #expect(refused(nil) == "missing_field" && refused("") == "missing_field")
        #expect(refused("https://user:pw@hooks.example.com/") == "invalid_webhook_url")
        #expect(refused("https://hooks.example.com/a b") == "invalid_webhook_url")
        #expect(refused("https://hooks.example.com/\u{7}") == "invalid_webhook_url")
        #expect(refused("https://hooks.example.com/#frag") == "invalid_webhook_url")
        #expect(refused("ftp://hooks.example.com/") == "invalid_webhook_url")
        #expect(refused("https://hooks.example.com:99999/") == "invalid_webhook_url")
        #expect(refused("https://hooks.example.com/" + String(repeating: "a", count: 2048)) == "invalid_webhook_url")
    }

    @Test func eventsAreKnownNonEmptyAndUnique() throws {
        #expect(try WebhookRules.events(["tier.changed", "message.created"]) == [.tierChanged, .messageCreated])
        #expect(try WebhookRules.events(WebhookEventType.allCases.map(\.rawValue)).count == 11)
        func refused(_ events: [String]?) -> String? {
            do { _ = try WebhookRules.events(events); return nil } catch { return error.code.rawValue }
        }
        #expect(refused(nil) == "missing_field" && refused([]) == "missing_field")
        #expect(refused(["message.created", "message.created"]) == "invalid_webhook_events")
        #expect(refused(["message.new"]) == "invalid_webhook_events")
        #expect(refused(["Message.Created"]) == "invalid_webhook_events")
    }

    @Test func secretsAreLongAndDifferent() {
        let a = WebhookRules.newSecret(), b = WebhookRules.newSecret()
        #expect(a.hasPrefix("whsec_") && a.count >= 6 + 43 && a != b)
    }
}

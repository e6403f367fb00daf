#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// JSON for the frames sent for every message, written by hand: the same bytes `JSONEncoder` writes with
/// `[.sortedKeys, .withoutEscapingSlashes]` (tests compare the two), at a fraction of the cost. Keys must be
/// written in sorted order; nil values are left out, as the synthesized `Encodable` conformances do.
public struct JSONText {
    private var bytes: [UInt8]
    private var empty = true

    /// Starts an object.
    public init() {
        self.init(capacity: 256)
    }

    /// Starts an object in a buffer of `capacity` bytes (the caller's estimate of the whole object).
    public init(capacity: Int) {
        // One allocation: an array literal first would allocate for its one byte, and the reserve again.
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    public mutating func field(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        open(key)
        JSONText.appendString(value, to: &bytes)
    }

    public mutating func field(_ key: StaticString, _ value: Int64?) {
        guard let value else { return }
        open(key)
        JSONText.appendInteger(value, to: &bytes)
    }

    /// A number as `JSONEncoder` writes it: the shortest form that reads back the same, without a trailing `.0`.
    public mutating func field(_ key: StaticString, _ value: Double?) {
        guard let value else { return }
        open(key)
        JSONText.appendDouble(value, to: &bytes)
    }

    static func appendDouble(_ value: Double, to bytes: inout [UInt8]) {
        let text = value.description
        bytes.append(contentsOf: text.hasSuffix(".0") ? text.utf8.dropLast(2) : text.utf8[...])
    }

    public mutating func field(_ key: StaticString, _ value: Bool) {
        open(key)
        bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
    }

    public mutating func field(_ key: StaticString, _ value: Bool?) {
        guard let value else { return }
        field(key, value)
    }

    /// A value that is JSON already (an object, an array).
    public mutating func field(_ key: StaticString, json value: String) {
        open(key)
        bytes.append(contentsOf: value.utf8)
    }

    /// A value that is JSON already, as UTF-8 bytes (another object made with `finishBytes`).
    public mutating func field(_ key: StaticString, json value: [UInt8]) {
        open(key)
        bytes.append(contentsOf: value)
    }

    /// Closes the object and returns it.
    public mutating func finish() -> String {
        String(decoding: finishBytes(), as: UTF8.self)
    }

    /// Closes the object and returns its UTF-8 bytes: what an event's frame is made of, with no `String` (and
    /// no UTF-8 validation) between the fields and the socket.
    public mutating func finishBytes() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private mutating func open(_ key: StaticString) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// `value` as a JSON string: quotes, backslashes and control characters escaped, everything else as is.
    public static func string(_ value: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count + 2)
        appendString(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func appendString(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings need no escape: copy them whole.
        let copied = value.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                return false
            }
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied == true {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(byte)
            case 0x20...: bytes.append(byte)
            case 0x08: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "f"))
            case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
            default:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                          hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]])
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                      UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: buffer[(20 - count)...])
        }
    }
}

extension MessageView {
    /// This message as JSON (`JSONEncoder` for a meal log, whose numbers it formats).
    public var jsonText: String { String(decoding: jsonBytes, as: UTF8.self) }

    /// This message's JSON as UTF-8 bytes: the same bytes as `jsonText`, made without a `String`.
    public var jsonBytes: [UInt8] {
        if meal != nil || attachments != nil { return Array(JSONText.encoder.encodeToString(self).utf8) }
        // The fields' names and numbers take under 200 bytes; the strings their own length (more when escaped).
        var json = JSONText(capacity: 200 + clientMessageId.utf8.count + kind.utf8.count + (senderId?.utf8.count ?? 0)
                                + (sessionId?.utf8.count ?? 0) + (text?.utf8.count ?? 0) + threadId.utf8.count)
        json.field("client_message_id", clientMessageId)
        json.field("created_at", createdAt)
        json.field("deleted_at", deletedAt)
        json.field("edited_at", editedAt)
        json.field("kind", kind)
        json.field("sender_id", senderId)
        json.field("seq", seq)
        json.field("session_id", sessionId)
        json.field("text", text)
        json.field("thread_id", threadId)
        return json.finishBytes()
    }
}

extension MessageEvent {
    public var jsonText: String { jsonText(message: message.jsonText) }

    public func jsonText(message messageJSON: String) -> String {
        MessageEvent.jsonText(message: messageJSON, unread: unread, totalUnread: totalUnread)
    }

    /// With the message's JSON written already: one message goes to two users with their own counts, and its
    /// JSON is the sender's reply too.
    public static func jsonText(message messageJSON: String, unread: Int64?, totalUnread: Int64?) -> String {
        String(decoding: jsonBytes(message: Array(messageJSON.utf8), unread: unread, totalUnread: totalUnread), as: UTF8.self)
    }

    /// The event's JSON as UTF-8 bytes, around the message's own (`MessageView.jsonBytes`, made once for both
    /// participants and the reply): the same bytes as `jsonText(message:unread:totalUnread:)`.
    public static func jsonBytes(message: [UInt8], unread: Int64?, totalUnread: Int64?) -> [UInt8] {
        var json = JSONText(capacity: message.count + 80)
        json.field("message", json: message)
        json.field("total_unread", totalUnread)
        json.field("type", "message")
        json.field("unread", unread)
        return json.finishBytes()
    }
}

extension UnreadEvent {
    public var jsonText: String {
        var json = JSONText()
        json.field("read_seq", readSeq)
        json.field("thread_id", threadId)
        json.field("total_unread", totalUnread)
        json.field("type", type)
        json.field("unread", unread)
        return json.finish()
    }
}

extension ReceiptEvent {
    public var jsonText: String {
        var json = JSONText()
        json.field("delivered_seq", deliveredSeq)
        json.field("read_seq", readSeq)
        json.field("thread_id", threadId)
        json.field("type", type)
        json.field("user_id", userId)
        return json.finish()
    }
}

extension ReceiptResult {
    public var jsonText: String {
        var json = JSONText()
        json.field("delivered_seq", deliveredSeq)
        json.field("read_seq", readSeq)
        json.field("thread_id", threadId)
        json.field("total_unread", totalUnread)
        json.field("unread", unread)
        return json.finish()
    }
}

extension UserView {
    public var jsonText: String {
        var json = JSONText()
        json.field("email", email)
        json.field("full_name", fullName)
        json.field("id", id)
        json.field("language", language)
        json.field("onboarding_completed", onboardingCompleted)
        json.field("phone", phone)
        json.field("role", role)
        json.field("time_zone", timeZone)
        return json.finish()
    }
}

extension HelloEvent {
    /// Sent once per socket: with thousands of connects a second, `JSONEncoder` was a tenth of a connect.
    public var jsonText: String {
        var json = JSONText()
        json.field("cursor", cursor)
        json.field("expires_at", expiresAt)
        json.field("protocol", protocolVersion)
        json.field("type", type)
        json.field("user", json: user.jsonText)
        return json.finish()
    }
}

extension PresenceEvent {
    /// Sent to every online peer on each connect and disconnect.
    public var jsonText: String {
        var json = JSONText()
        json.field("last_seen_at", lastSeenAt)
        json.field("online", online)
        json.field("type", type)
        json.field("user_id", userId)
        return json.finish()
    }
}

extension TypingEvent {
    public var jsonText: String {
        var json = JSONText()
        json.field("expires_in", Int64(expiresIn))
        json.field("thread_id", threadId)
        json.field("type", type)
        json.field("user_id", userId)
        return json.finish()
    }
}

extension SessionView {
    /// This session as JSON: every session change writes it into its record, its reply and two events.
    public var jsonText: String {
        var json = JSONText()
        json.field("cancel_reason", cancelReason)
        json.field("client_id", clientId)
        json.field("coach_id", coachId)
        json.field("coach_joined", coachJoined)
        json.field("conflict_with", conflictWith)
        json.field("duration_minutes", Int64(durationMinutes))
        json.field("held_status", heldStatus)
        json.field("id", id)
        json.field("meet_url", meetUrl)
        json.field("outside_availability", outsideAvailability)
        json.field("proposed_by", proposedBy)
        json.field("proposed_start", proposedStart)
        json.field("purpose", purpose)
        json.field("reminded", reminded)
        json.field("resolving_for", resolvingFor)
        json.field("start", start)
        json.field("status", status)
        json.field("thread_id", threadId)
        json.field("version", Int64(version))
        return json.finish()
    }
}

extension QuotaAllowance {
    public var jsonText: String {
        var json = JSONText()
        json.field("band", band)
        json.field("left", left.map(Int64.init))
        json.field("limit", limit.map(Int64.init))
        json.field("used", Int64(used))
        return json.finish()
    }
}

extension QuotaEvent {
    /// After every accepted send of a metered client.
    public var jsonText: String {
        var inner = JSONText()
        if let ai = quota.aiGenerations { inner.field("ai_generations", json: ai.jsonText) }
        inner.field("attachments", quota.attachments)
        inner.field("call_minutes", Int64(quota.callMinutes))
        inner.field("calls", json: quota.calls.jsonText)
        inner.field("messages", json: quota.messages.jsonText)
        inner.field("resets_at", quota.resetsAt)
        inner.field("tier", quota.tier)
        inner.field("warning", quota.warning)
        var json = JSONText()
        json.field("quota", json: inner.finish())
        json.field("type", type)
        return json.finish()
    }
}

extension SessionEvent {
    public var jsonText: String {
        SessionEvent.jsonText(change: change, sessionJSON: session.jsonText, messageJSON: message.jsonText, unread: unread,
                              totalUnread: totalUnread)
    }

    /// With the session's and the message's JSON written already (one change goes to both participants).
    public static func jsonText(change: String, sessionJSON: String, messageJSON: String, unread: Int64,
                                totalUnread: Int64) -> String {
        var json = JSONText()
        json.field("change", change)
        json.field("message", json: messageJSON)
        json.field("session", json: sessionJSON)
        json.field("total_unread", totalUnread)
        json.field("type", "session")
        json.field("unread", unread)
        return json.finish()
    }
}

extension SessionsResult {
    public var jsonText: String {
        var json = JSONText()
        if let nextCursor { json.field("next_cursor", nextCursor) } else { json.field("next_cursor", json: "null") }
        json.field("pending_resolutions", Int64(pendingResolutions))
        json.field("sessions", json: "[" + sessions.map(\.jsonText).joined(separator: ",") + "]")
        return json.finish()
    }
}

extension JSONText {
    /// The encoder whose output this type reproduces.
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

extension JSONEncoder {
    /// Our own wire types always encode; a failure is a programming error.
    public func encodeToString<T: Encodable>(_ value: T) -> String {
        String(decoding: try! encode(value), as: UTF8.self)
    }
}

// MARK: - The coach's dashboard (200 cards: JSONEncoder would take most of its time)

extension GoalView {
    public var jsonText: String {
        var json = JSONText()
        json.field("behind_by_percent", behindByPercent)
        json.field("client_id", clientId)
        json.field("completed_at", completedAt)
        json.field("created_at", createdAt)
        json.field("id", id)
        json.field("kind", kind)
        if let plan { json.field("plan", json: JSONText.encoder.encodeToString(plan)) }
        json.field("sex", sex)
        json.field("start_percent", startPercent)
        json.field("status", status)
        json.field("target_percent", targetPercent)
        return json.finish()
    }
}

extension ClientCardView {
    public var jsonText: String {
        var json = JSONText()
        json.field("active_challenges", json: "[" + activeChallenges.map { challenge in
            var item = JSONText()
            item.field("days", Int64(challenge.days))
            item.field("done", Int64(challenge.done))
            item.field("id", challenge.id)
            item.field("name", challenge.name)
            item.field("percent", Int64(challenge.percent))
            item.field("status", challenge.status)
            return item.finish()
        }.joined(separator: ",") + "]")
        json.field("checked_in_today", checkedInToday)
        json.field("client_id", clientId)
        if let dailyCheckIn { json.field("daily_check_in", json: dailyCheckIn.jsonText) }
        if let goal { json.field("goal", json: goal.jsonText) }
        json.field("last_check_in_at", lastCheckInAt)
        json.field("latest_weight_kg", latestWeightKg)
        json.field("name", name)
        if let nextSession {
            var session = JSONText()
            session.field("id", nextSession.id)
            session.field("start", nextSession.start)
            session.field("status", nextSession.status)
            json.field("next_session", json: session.finish())
        }
        json.field("pending_resolutions", Int64(pendingResolutions))
        json.field("thread_id", threadId)
        json.field("unread", unread)
        json.field("weight_change_kg", weightChangeKg)
        return json.finish()
    }
}

extension CoachAnalyticsView {
    public var jsonText: String {
        var json = JSONText()
        json.field("challenge_completion_percent", challengeCompletionPercent.map(Int64.init))
        json.field("check_ins_per_client_week", checkInsPerClientWeek)
        json.field("clients", Int64(clients))
        json.field("engagement_percent", engagementPercent.map(Int64.init))
        json.field("from", from)
        json.field("meal_log_days_percent", mealLogDaysPercent.map(Int64.init))
        json.field("popular_challenge_types", json: "[" + popularChallengeTypes.map { type in
            var item = JSONText()
            item.field("challenges", Int64(type.challenges))
            item.field("type", type.type)
            return item.finish()
        }.joined(separator: ",") + "]")
        json.field("session_attendance_percent", sessionAttendancePercent.map(Int64.init))
        json.field("to", to)
        return json.finish()
    }
}

extension DashboardResult {
    public var jsonText: String {
        var json = JSONText()
        json.field("analytics", json: analytics.jsonText)
        json.field("clients", json: "[" + clients.map(\.jsonText).joined(separator: ",") + "]")
        return json.finish()
    }
}

extension ClientCardEvent {
    public var jsonText: String {
        var json = JSONText()
        json.field("card", json: card.jsonText)
        json.field("type", type)
        return json.finish()
    }
}

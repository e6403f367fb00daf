import FoundationEssentials
import Testing
@testable import SpotterProtocol

/// The hand-written JSON must be byte for byte what JSONEncoder (sorted keys, unescaped slashes) writes.
@Suite("JSONText: the hot-path JSON")
struct JSONTextTests {
    private func encoded<T: Encodable>(_ value: T) -> String { JSONText.encoder.encodeToString(value) }

    /// Every ASCII character alone, and tricky non-ASCII text.
    static let samples: [String] = (0..<128).map { String(UnicodeScalar(UInt8($0))) } + [
        "", "hello coach", "a/b\\c\"d", "line\nbreak\ttab\r\u{8}\u{c}", "\u{0}\u{1f}\u{7f}",
        "مرحبا يا كابتن 💪", "emoji 👩🏽‍💻 and \u{2028}\u{2029} separators", "\u{FEFF}bom", "é vs e\u{301}",
    ]

    @Test("strings escape exactly as JSONEncoder escapes them")
    func strings() {
        for sample in Self.samples {
            #expect(JSONText.string(sample) == encoded(sample), "\(Array(sample.unicodeScalars.map(\.value)))")
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let scalars = (0..<Int.random(in: 0..<40, using: &random)).compactMap { _ in
                UnicodeScalar(UInt32.random(in: 0..<(Bool.random(using: &random) ? 0x80 : 0x2FFFF), using: &random))
            }
            let sample = String(String.UnicodeScalarView(scalars))
            #expect(JSONText.string(sample) == encoded(sample), "\(scalars.map(\.value))")
        }
    }

    @Test("messages, events and receipt results match JSONEncoder, with nil fields left out")
    func wireTypes() {
        for text in Self.samples {
            for senderId in [String?.none, "u-\(text)"] {
                let message = MessageView(threadId: "t/\(text)", seq: Int64.max, senderId: senderId, clientMessageId: text,
                                          kind: senderId == nil ? "system" : "text", text: text, meal: nil,
                                          createdAt: -5, sessionId: senderId == nil ? "s/\(text)" : nil)
                #expect(message.jsonText == encoded(message))
                #expect(MessageEvent(message: message).jsonText == encoded(MessageEvent(message: message)))
            }
            let unread = UnreadEvent(threadId: text, unread: 3, totalUnread: 1_000_000_007, readSeq: 0)
            #expect(unread.jsonText == encoded(unread))
            let receipt = ReceiptEvent(threadId: "t", userId: text, deliveredSeq: 9, readSeq: Int64.min)
            #expect(receipt.jsonText == encoded(receipt))
            let result = ReceiptResult(threadId: text, deliveredSeq: 1, readSeq: 2, unread: 3, totalUnread: 4)
            #expect(result.jsonText == encoded(result))
            for lastSeen in [Int64?.none, 1_790_000_000] {
                let presence = PresenceEvent(userId: text, online: lastSeen == nil, lastSeenAt: lastSeen)
                #expect(presence.jsonText == encoded(presence))
            }
            let typing = TypingEvent(threadId: text, userId: "u-\(text)", expiresIn: 5)
            #expect(typing.jsonText == encoded(typing))
        }
        let meal = MessageView(threadId: "t", seq: 1, senderId: "u", clientMessageId: "m", kind: "meal_log", text: nil,
                               meal: MealLog(name: "Oats", ingredients: ["oats", "milk"], calories: 310.5, proteinG: 12,
                                             carbsG: 50.25, fatsG: 7, mealType: "breakfast", photoRef: nil),
                               createdAt: 1)
        #expect(meal.jsonText == encoded(meal))
        #expect(MessageEvent(message: meal).jsonText == encoded(MessageEvent(message: meal)))
    }

    @Test("sessions, their events and the calendar match JSONEncoder, with nil fields left out")
    func sessions() {
        for text in Self.samples {
            for full in [false, true] {
                let optional = full ? text : nil
                let session = SessionView(
                    id: "s-\(text)", threadId: text, coachId: "c", clientId: "a/\(text)", start: full ? -1 : 1_790_000_000,
                    durationMinutes: 45, purpose: text, meetUrl: "https://meet.jit.si/spotter-\(text)", status: "scheduled",
                    proposedBy: optional, proposedStart: full ? 1_790_003_600 : nil, conflictWith: optional,
                    heldStatus: optional, resolvingFor: optional, cancelReason: optional, coachJoined: full, reminded: !full,
                    version: text.utf8.count)
                #expect(session.jsonText == encoded(session))
                let message = MessageView(threadId: text, seq: 7, senderId: nil, clientMessageId: "", kind: "system",
                                          text: text, meal: nil, createdAt: 9, sessionId: session.id)
                let event = SessionEvent(change: text, session: session, message: message, unread: 3, totalUnread: 11)
                #expect(event.jsonText == encoded(event))
                let list = SessionsResult(sessions: full ? [session, session] : [], pendingResolutions: text.count,
                                          nextCursor: optional)
                #expect(list.jsonText == encoded(list))
            }
        }
    }

    @Test("the quota event matches JSONEncoder, limited or not, with and without a warning")
    func quota() {
        for text in Self.samples {
            for limited in [false, true] {
                let messages = QuotaAllowance(used: 16, limit: limited ? 20 : nil, left: limited ? 4 : nil, band: text)
                let view = QuotaView(tier: text, messages: messages, calls: QuotaAllowance(used: 0, limit: 1, left: 1, band: "green"),
                                     callMinutes: 15, attachments: limited, resetsAt: 1_796_083_200, warning: limited ? text : nil)
                #expect(QuotaEvent(quota: view).jsonText == encoded(QuotaEvent(quota: view)))
            }
        }
    }

    @Test("the hello and its user match JSONEncoder, with nil fields left out")
    func hello() {
        for text in Self.samples {
            for (optional, onboarded) in [(String?.none, false), (text, true)] {
                let user = UserView(id: "u-\(text)", role: "client", fullName: optional, email: optional, phone: optional,
                                    language: text, onboardingCompleted: onboarded)
                #expect(user.jsonText == encoded(user))
                let hello = HelloEvent(user: user, expiresAt: 1_790_000_000, cursor: Int64(text.utf8.count))
                #expect(hello.jsonText == encoded(hello))
            }
        }
    }

    @Test("the dashboard, its cards and the card event match JSONEncoder, numbers included")
    func dashboard() {
        for (index, text) in Self.samples.enumerated() {
            let weights: [Double?] = [nil, 80, 81.1, 0.1 + 0.2, -1.3, 72.456, 1e-7, 123_456.75]
            let weight = weights[index % weights.count]
            let goal = GoalView(id: "g" + text, clientId: text, kind: "cutting", sex: "female", targetPercent: 18.5,
                                startPercent: weight ?? 30, status: "active", createdAt: 5, completedAt: index % 2 == 0 ? nil : 9)
            let card = ClientCardView(
                clientId: text, threadId: "t" + text, name: index % 3 == 0 ? nil : text, unread: Int64(index), goal: index % 2 == 0 ? goal : nil,
                activeChallenges: index % 2 == 0 ? [] : [ChallengeSummary(id: "c", name: text, done: 2, days: 7, percent: 28, status: "active")],
                lastCheckInAt: weight == nil ? nil : 7, latestWeightKg: weight, weightChangeKg: weight.map { -$0 / 3 },
                nextSession: index % 2 == 0 ? nil : NextSessionView(id: "s", start: 99, status: "scheduled"), pendingResolutions: index)
            #expect(card.jsonText == encoded(card))
            #expect(goal.jsonText == encoded(goal))
            #expect(ClientCardEvent(card: card).jsonText == encoded(ClientCardEvent(card: card)))
            let analytics = CoachAnalyticsView(from: 1, to: 2, clients: index, challengeCompletionPercent: index % 2 == 0 ? nil : 66,
                                               checkInsPerClientWeek: weight, mealLogDaysPercent: 28, sessionAttendancePercent: nil)
            let result = DashboardResult(clients: [card, card], analytics: analytics)
            #expect(result.jsonText == encoded(result))
        }
    }

    @Test("a reply's id is a JSON string or null")
    func replyID() {
        #expect(Reply.ok(id: "a\"b", resultJSON: "{}") == #"{"type":"reply","id":"a\"b","ok":true,"result":{}}"#)
        #expect(Reply.ok(id: nil, resultJSON: "1") == #"{"type":"reply","id":null,"ok":true,"result":1}"#)
    }
}

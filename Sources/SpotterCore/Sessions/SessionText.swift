import Foundation
import SpotterProtocol

/// The system message a session change posts into its thread, in the seed's words (002 §7), rendered for one
/// recipient: in their language (English or Arabic) and at their wall-clock time in their IANA time zone, so a
/// session across a daylight-saving change reads right on each side. Pure: the time zone rules come from the
/// system's tz database.
public enum SessionText {
    /// The message for `after`, the session as `change` left it (`before` is how it was; nil when created).
    /// `recipient` is the side reading it; `actor` the side that made the change (nil for the server).
    public static func render(before: Session?, after: Session, actor: SessionActor?, recipient: SessionActor,
                              language: Language, timeZone: TimeZone, action: SessionAction? = nil) -> String {
        let w = Words(language: language, timeZone: timeZone)
        let when = w.long(after.start)
        let length = w.duration(after.durationMinutes)
        let byYou = actor == recipient
        if let before, before.status == after.status {
            if after.reminded && !before.reminded { return w.lines(w.startingSoon, when) }
            if after.status == .inProgress, let actor, actor != .system, action == .join || action == .leave {
                return w.lines(w.joinedOrLeft(actor, joined: action == .join))
            }
        }
        switch (before?.status, after.status) {
        case (nil, .needsResolution), (_, .invited):
            return w.lines(w.newSession, when, length, w.purpose(after.purpose))
        case (_, .requested):
            return w.lines(w.callRequested, when, length, w.purpose(after.purpose))
        case (_, .alternativeProposed):
            return w.lines(w.alternative, w.alternativeBody(from: w.short(after.start), to: w.short(after.proposedStart ?? after.start)))
        case (_, .rescheduleRequested):
            let from = w.short(after.start), to = w.short(after.proposedStart ?? after.start)
            return w.lines(w.rescheduleRequest, byYou ? w.youAskedToMove(from: from, to: to)
                                                      : w.asksToMove(actor ?? .coach, from: from, to: to))
        case (.rescheduleRequested?, .scheduled):
            return before?.start != after.start
                ? w.lines(w.rescheduled, w.nowAt(when))
                : w.lines(w.rescheduleDeclined, w.staysAt(when))
        case (_, .scheduled):
            return w.lines(w.confirmed, when, length)
        case (_, .needsResolution):
            return w.lines(w.pending, w.coachConfirming(when))
        case (_, .cancelled):
            let why = after.cancelReason == SessionRules.linkEndedReason ? w.linkEnded : after.cancelReason.map(w.reason)
            return w.lines(w.cancelled, w.cancelledBody(w.day(after.start)), why ?? "")
        case (_, .declined):
            return w.lines(w.declined, w.declinedBody(w.day(after.start)))
        case (_, .expired):
            return w.lines(w.expired, w.expiredBody(when))
        case (_, .inProgress):
            return w.lines(w.coachJoined)
        case (_, .completed):
            return w.lines(w.completed, when)
        case (_, .missed):
            return w.lines(w.missed, w.missedBody(when))
        }
    }

    /// The wording and the date formats of one language in one time zone.
    struct Words {
        let language: Language
        let calendar: Calendar

        init(language: Language, timeZone: TimeZone) {
            self.language = language
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            self.calendar = calendar
        }

        var ar: Bool { language == .arabic }

        func lines(_ parts: String...) -> String { parts.filter { !$0.isEmpty }.joined(separator: "\n") }

        // MARK: Dates, by hand: the same output on every platform, whatever the locale data says.

        static let weekdaysEN = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
        static let weekdaysAR = ["الأحد", "الاثنين", "الثلاثاء", "الأربعاء", "الخميس", "الجمعة", "السبت"]
        static let monthsEN = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        static let monthsAR = ["يناير", "فبراير", "مارس", "أبريل", "مايو", "يونيو", "يوليو", "أغسطس", "سبتمبر", "أكتوبر",
                               "نوفمبر", "ديسمبر"]

        func parts(_ instant: Int64) -> DateComponents {
            calendar.dateComponents([.weekday, .month, .day, .hour, .minute], from: Date(timeIntervalSince1970: TimeInterval(instant)))
        }

        func weekday(_ c: DateComponents) -> String { (ar ? Self.weekdaysAR : Self.weekdaysEN)[(c.weekday ?? 1) - 1] }

        /// "Monday, Jan 20" / "الاثنين، 20 يناير"
        func day(_ instant: Int64) -> String {
            let c = parts(instant)
            let month = (ar ? Self.monthsAR : Self.monthsEN)[(c.month ?? 1) - 1]
            return ar ? "\(weekday(c))، \(c.day ?? 1) \(month)" : "\(weekday(c)), \(month) \(c.day ?? 1)"
        }

        /// "3:00 PM" / "3:00 م"
        func time(_ c: DateComponents, compact: Bool = false) -> String {
            let hour = c.hour ?? 0, minute = c.minute ?? 0
            let twelve = hour % 12 == 0 ? 12 : hour % 12
            let mark = ar ? (hour < 12 ? "ص" : "م") : (hour < 12 ? "AM" : "PM")
            let clock = compact && minute == 0 ? "\(twelve)" : "\(twelve):\(minute < 10 ? "0" : "")\(minute)"
            return compact && !ar ? clock + mark : clock + " " + mark
        }

        /// "Monday, Jan 20 at 3:00 PM"
        func long(_ instant: Int64) -> String {
            ar ? "\(day(instant)) الساعة \(time(parts(instant)))" : "\(day(instant)) at \(time(parts(instant)))"
        }

        /// "Monday 3PM" (the seed's reschedule wording)
        func short(_ instant: Int64) -> String {
            let c = parts(instant)
            return "\(weekday(c)) \(time(c, compact: true))"
        }

        func duration(_ minutes: Int) -> String {
            if ar {
                return minutes == 60 ? "المدة: ساعة واحدة" : "المدة: \(minutes) دقيقة"
            }
            return minutes == 60 ? "Duration: 1 hour" : "Duration: \(minutes) minutes"
        }

        func purpose(_ text: String) -> String { text.isEmpty ? "" : (ar ? "الهدف: \(text)" : "Purpose: \(text)") }

        // MARK: The seed's messages (002 §7) and the rest in the same voice

        var newSession: String { ar ? "🎥 جلسة جديدة مجدولة" : "🎥 New Session Scheduled" }
        var callRequested: String { ar ? "📞 طلب مكالمة فيديو" : "📞 Video Call Requested" }
        var confirmed: String { ar ? "✅ تم تأكيد الجلسة" : "✅ Session Confirmed" }
        var alternative: String { ar ? "🔄 اقتراح موعد بديل" : "🔄 Alternative Time Proposed" }
        var rescheduleRequest: String { ar ? "🔄 طلب إعادة جدولة" : "🔄 Reschedule Request" }
        var rescheduled: String { ar ? "📅 تمت إعادة جدولة الجلسة" : "📅 Session Rescheduled" }
        var rescheduleDeclined: String { ar ? "↩️ رُفض طلب إعادة الجدولة" : "↩️ Reschedule Declined" }
        var pending: String { ar ? "⏳ الجلسة بانتظار التأكيد" : "⏳ Session Pending" }
        var cancelled: String { ar ? "❌ تم إلغاء الجلسة" : "❌ Session Cancelled" }
        var declined: String { ar ? "❌ تم رفض الجلسة" : "❌ Session Declined" }
        var expired: String { ar ? "⌛ انتهت صلاحية الدعوة" : "⌛ Invite Expired" }
        var coachJoined: String { ar ? "🟢 انضم المدرب — بدأت الجلسة" : "🟢 Coach has joined — the session has started" }
        var completed: String { ar ? "✔️ اكتملت الجلسة" : "✔️ Session Completed" }
        var missed: String { ar ? "⚠️ فاتت الجلسة" : "⚠️ Session Missed" }
        var startingSoon: String { ar ? "⏰ تبدأ الجلسة قريبًا" : "⏰ Session Starting Soon" }

        func joinedOrLeft(_ side: SessionActor, joined: Bool) -> String {
            let who = side == .client ? (ar ? "العميل" : "Client") : (ar ? "المدرب" : "Coach")
            if ar { return joined ? "👋 انضم \(who) إلى الجلسة" : "👋 غادر \(who) الجلسة" }
            return joined ? "👋 \(who) joined the session" : "👋 \(who) left the session"
        }

        func alternativeBody(from: String, to: String) -> String {
            ar ? "يقترح العميل \(to) بدلاً من \(from)." : "Client proposes \(to) instead of \(from)."
        }
        func asksToMove(_ side: SessionActor, from: String, to: String) -> String {
            let who = side == .client ? (ar ? "العميل" : "Client") : (ar ? "المدرب" : "Coach")
            return ar ? "\(who) يطلب نقل جلستك من \(from) إلى \(to)." : "\(who) is asking to move your session from \(from) to \(to)."
        }
        func youAskedToMove(from: String, to: String) -> String {
            ar ? "طلبت نقل الجلسة من \(from) إلى \(to)." : "You asked to move the session from \(from) to \(to)."
        }
        func nowAt(_ when: String) -> String { ar ? "الموعد الجديد: \(when)" : "Now: \(when)" }
        func staysAt(_ when: String) -> String { ar ? "تبقى الجلسة في موعدها: \(when)" : "The session stays on \(when)." }
        func coachConfirming(_ when: String) -> String { ar ? "يؤكد المدرب موعد \(when)." : "The coach is confirming \(when)." }
        func cancelledBody(_ day: String) -> String {
            ar ? "تم إلغاء جلستك يوم \(day)." : "Your session on \(day) has been cancelled."
        }
        func reason(_ text: String) -> String { ar ? "السبب: \(text)" : "Reason: \(text)" }
        var linkEnded: String { ar ? "انتهت علاقة التدريب." : "The coaching relationship has ended." }
        func declinedBody(_ day: String) -> String { ar ? "رُفضت الجلسة يوم \(day)." : "The session on \(day) was declined." }
        func expiredBody(_ when: String) -> String {
            ar ? "لم يتم الرد على جلسة \(when) في الوقت المحدد." : "The session on \(when) was not answered in time."
        }
        func missedBody(_ when: String) -> String {
            ar ? "لم يبدأ المدرب جلسة \(when)." : "The coach did not start the session on \(when)."
        }
    }
}

extension SessionText {
    /// A `session` record as its thread's system message for one participant (nil if the record is not a
    /// system message, or holds a session this server cannot read).
    public static func message(_ record: ChatRecord, threadID: String, recipient: SessionActor, language: Language,
                               timeZone: TimeZone) -> MessageView? {
        guard let stored = SessionRecordBody(record) else { return nil }
        return message(stored, record: record, threadID: threadID, recipient: recipient, language: language,
                       timeZone: timeZone)
    }

    /// The same with the record's body decoded already (an event words it for both participants).
    public static func message(_ stored: SessionRecordBody, record: ChatRecord, threadID: String,
                               recipient: SessionActor, language: Language, timeZone: TimeZone) -> MessageView? {
        guard record.content.session?.isSystemMessage == true, let after = Session(view: stored.session) else { return nil }
        let text = render(
            before: stored.before, after: after, actor: stored.actor.flatMap(SessionActor.init(rawValue:)),
            recipient: recipient, language: language, timeZone: timeZone,
            action: stored.action.flatMap(SessionAction.init(rawValue:)))
        return MessageView(threadId: threadID, seq: record.seq, senderId: nil, clientMessageId: "",
                           kind: MessageKind.system.wire, text: text, meal: nil, createdAt: record.at,
                           sessionId: after.id)
    }
}

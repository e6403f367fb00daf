import SpotterProtocol

/// What a push says, in English and Arabic (Protocol/README.md, "Notifications", lists every line). Session changes
/// use the thread's own system-message wording (`SessionText`); these are the lines only a push needs.
public struct PushWords: Sendable {
    public let language: Language

    public init(_ language: Language) {
        self.language = language
    }

    private var ar: Bool { language == .arabic }

    /// One new message, or `count` piled up within the coalescing window. `sender` nil: previews are off (`none`).
    public func newMessages(_ count: Int, from sender: String?) -> String {
        switch (count > 1, sender) {
        case (false, let name?): ar ? "رسالة جديدة من \(name)" : "New message from \(name)"
        case (false, nil): ar ? "رسالة جديدة" : "New message"
        case (true, let name?): ar ? "\(count) رسائل جديدة من \(name)" : "\(count) new messages from \(name)"
        case (true, nil): ar ? "\(count) رسائل جديدة" : "\(count) new messages"
        }
    }

    /// A session change with previews off (`none`): nothing of its time or purpose.
    public var sessionUpdate: String { ar ? "تحديث على جلستك" : "Session update" }

    /// A coaching link changed, with previews off (`none`): no name.
    public var coachingUpdate: String { ar ? "تحديث على التدريب" : "Coaching update" }

    /// A coaching link started: the client now has `name` as a coach, or the coach has `name` as a client.
    public func linkStarted(with name: String, youAreCoach: Bool) -> String {
        youAreCoach ? (ar ? "عميل جديد: \(name)" : "New client: \(name)")
                    : (ar ? "مدربك الآن \(name)" : "\(name) is now your coach")
    }

    /// A coaching link ended (a coach change decided, or the admin ended it).
    public func linkEnded(with name: String) -> String {
        ar ? "انتهى التدريب مع \(name)" : "Your coaching with \(name) has ended"
    }

    /// The name shown for someone who has not given one.
    public var someone: String { ar ? "مستخدم" : "Someone" }
}

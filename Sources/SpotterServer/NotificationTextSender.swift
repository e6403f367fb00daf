import Logging
import SpotterCore

/// One text for a person off the app (issue 28, item 7: a session reminder by email or SMS).
public struct NotificationText: Sendable, Equatable {
    /// The same every time this text is sent for the same reason to the same person (a log delivery id and the user
    /// id, `pos:42:<user id>`): a gateway that has seen it already drops the repeat (a crash between the send and
    /// the saved position sends it again).
    public var id: String
    public var channel: ReminderChannel
    /// The email address or the phone number.
    public var to: String
    /// The first line of `text`, for an email's subject.
    public var subject: String
    /// In the person's language, times in their zone.
    public var text: String
    /// What it is about: `session_reminder`.
    public var kind: String

    public init(id: String, channel: ReminderChannel, to: String, subject: String, text: String, kind: String) {
        self.id = id
        self.channel = channel
        self.to = to
        self.subject = subject
        self.text = text
        self.kind = kind
    }
}

/// Sends notification texts through a gateway (SMS or email), as `OTPSender` sends sign-in codes. Called on a log
/// consumer's thread, never on the loop: it may block on the network. It returns once the gateway accepted the text;
/// it throws `NotificationTextFailure.refused` for a text the gateway will never accept (not retried), anything
/// else for a failure worth retrying (the consumer tries the batch again, with the same ids).
public protocol NotificationTextSender: Sendable {
    func send(_ text: NotificationText) throws
}

public enum NotificationTextFailure: Error, Equatable, CustomStringConvertible {
    /// The gateway refused this text for good (an HTTP 4xx other than 408 and 429): a bad address, say.
    case refused(status: Int)

    public var description: String {
        switch self {
        case .refused(let status): return "the gateway refused the text (\(status))"
        }
    }
}

/// The development sender: nothing goes out. The address and the text are logged at debug level only (seed 000
/// NFR-SEC-03: no personal data in logs).
public struct LogNotificationSender: NotificationTextSender {
    let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    public func send(_ text: NotificationText) throws {
        logger.notice("notification text handed to the development sender (nothing sent; address and text at debug level)",
                      metadata: ["id": "\(text.id)", "channel": "\(text.channel.rawValue)", "kind": "\(text.kind)"])
        logger.debug("notification text (development sender)", metadata: ["to": "\(text.to)", "text": "\(text.text)"])
    }
}

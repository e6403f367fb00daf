import Logging
import SpotterCore
import SpotterPorts
import SpotterProtocol

/// Session reminders off the app (issue 28, item 7): a durable consumer of the log (`reminders`) that, for each
/// session record whose change is `starting_soon`, sends the coach and the client the reminder by email or SMS when
/// `ReminderRoute` says so (reminders on, and no device or email/SMS chosen). The words are the thread's system
/// message (`SessionText`), in the person's language with times in their zone, read from the accounts when the
/// record comes.
///
/// At least once: each text carries the id `<delivery id>:<user id>` (`pos:42:<user id>`), the same each time the
/// record is handed over again after a crash, so a gateway drops a repeat. A gateway failure other than a refusal
/// for good throws, and the batch comes again after a back-off; a refusal for good (a bad address) is logged and
/// passed over. A person no gateway can reach gets nothing and is counted. A reminder whose session has ended by
/// the time it is read (the consumer was stopped for long) is not sent.
///
/// Runs on the consumer's thread; reads the accounts (blocking) there, never on the loop.
final class ReminderConsumer: LogConsumer {
    let name = "reminders"
    let start = LogConsumerStart.newest
    private let accounts: AccountStore
    private let senders: [ReminderChannel: any NotificationTextSender]
    private let clock: any Clock
    private let logger: Logger
    /// `spotter_reminders_total{outcome}`, by outcome: `sent_email`, `sent_sms` (a text sent again after a crash
    /// counts again), `push_only`, `off`, `unreachable`, `refused`, `late`.
    private let outcomes: [String: Counter]

    init(accounts: AccountStore, senders: [ReminderChannel: any NotificationTextSender], clock: any Clock,
         metrics: ServerMetrics, logger: Logger) {
        self.accounts = accounts
        self.senders = senders
        self.clock = clock
        var logger = logger
        logger[metadataKey: "component"] = "reminders"
        self.logger = logger
        let names = ["sent_email", "sent_sms", "push_only", "off", "unreachable", "refused", "late"]
        outcomes = Dictionary(uniqueKeysWithValues: names.map { ($0, metrics.reminderCounter($0)) })
    }

    private func count(_ outcome: String) {
        outcomes[outcome]?.increment()
    }

    func deliver(_ deliveries: [LogDelivery]) throws {
        for delivery in deliveries {
            guard case .session = delivery.record.content, let body = SessionRecordBody(delivery.record),
                  body.change == "starting_soon", let session = Session(view: body.session) else { continue }
            guard clock.now < session.start + Int64(session.durationMinutes) * 60 else {
                count("late")
                continue
            }
            for (userID, side) in [(session.coachID, SessionActor.coach), (session.clientID, .client)] {
                try remind(userID, as: side, body, session, id: delivery.id + ":" + userID)
            }
        }
    }

    private func remind(_ userID: String, as side: SessionActor, _ body: SessionRecordBody, _ session: Session,
                        id: String) throws {
        guard let user = try accounts.user(id: userID) else { return }
        let preferences = try accounts.notificationPreferences(userID: userID)
        let hasDevice = !(try accounts.devices(userID: userID).isEmpty)
        let decision = ReminderRoute.decide(preferences, hasDevice: hasDevice, email: user.email, phone: user.phone,
                                            gateways: Set(senders.keys))
        switch decision {
        case .off: count("off")
        case .pushOnly: count("push_only")
        case .unreachable:
            count("unreachable")
            logger.info("session reminder reaches no one: no device and no address a gateway can reach",
                        metadata: ["id": "\(id)"])
        case .send(let targets):
            let text = SessionText.render(before: body.before, after: session, actor: body.actor.flatMap(SessionActor.init(rawValue:)),
                                          recipient: side, language: Language(rawValue: user.language) ?? .english,
                                          timeZone: TimeZoneRules.zone(user.timeZone))
            let subject = String(text.split(separator: "\n", maxSplits: 1).first ?? "")
            for target in targets {
                guard let sender = senders[target.channel] else { continue }
                do {
                    try sender.send(NotificationText(id: id, channel: target.channel, to: target.address, subject: subject,
                                                     text: text, kind: "session_reminder"))
                    count("sent_" + target.channel.rawValue)
                } catch let failure as NotificationTextFailure {
                    count("refused")
                    logger.warning("session reminder refused by the gateway; not retried",
                                   metadata: ["id": "\(id)", "channel": "\(target.channel.rawValue)", "error": "\(failure)"])
                }
            }
        }
    }
}

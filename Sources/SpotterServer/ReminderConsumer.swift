import Logging
import Synchronization
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
    private let counts = Mutex(ReminderCounts())

    /// What the consumer did so far, per outcome (a text sent again after a crash counts again).
    struct ReminderCounts: Equatable {
        var sent: [ReminderChannel: Int] = [:]
        var pushOnly = 0
        var off = 0
        var unreachable = 0
        var refused = 0
        var late = 0
    }

    init(accounts: AccountStore, senders: [ReminderChannel: any NotificationTextSender], clock: any Clock, logger: Logger) {
        self.accounts = accounts
        self.senders = senders
        self.clock = clock
        var logger = logger
        logger[metadataKey: "component"] = "reminders"
        self.logger = logger
    }

    var counted: ReminderCounts { counts.withLock { $0 } }

    func deliver(_ deliveries: [LogDelivery]) throws {
        for delivery in deliveries {
            guard case .session = delivery.record.content, let body = SessionRecordBody(delivery.record),
                  body.change == "starting_soon", let session = Session(view: body.session) else { continue }
            guard clock.now < session.start + Int64(session.durationMinutes) * 60 else {
                counts.withLock { $0.late += 2 }
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
        case .off: counts.withLock { $0.off += 1 }
        case .pushOnly: counts.withLock { $0.pushOnly += 1 }
        case .unreachable:
            counts.withLock { $0.unreachable += 1 }
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
                    counts.withLock { $0.sent[target.channel, default: 0] += 1 }
                } catch let failure as NotificationTextFailure {
                    counts.withLock { $0.refused += 1 }
                    logger.warning("session reminder refused by the gateway; not retried",
                                   metadata: ["id": "\(id)", "channel": "\(target.channel.rawValue)", "error": "\(failure)"])
                }
            }
        }
    }
}

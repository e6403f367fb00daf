import CNATS
import EventLoop
import Logging
import SpotterBroker

/// The broker of a cluster: every Spotter process connects to one NATS server (or cluster), and a user's
/// events travel on the user's subject to every process holding one of the user's sockets. `publish` delivers
/// to this process's subscribers at once, as `InProcessBroker` does, and sends the event on the subject for the
/// others (NATS does not echo it back: no duplicates). A process subscribes to a user's subject on the user's
/// first local subscriber and unsubscribes on the last.
///
/// Presence is cluster-wide (`NATSBroker+Presence.swift`): each process announces its users coming and going,
/// beats every `heartbeatMilliseconds`, and is forgotten — its users offline — when nothing from it arrived
/// for `deadAfterMilliseconds`, so a process killed with kill -9 leaves no ghosts.
///
/// Order: NATS keeps each connection's order, so a user's events published by one process arrive everywhere in
/// that order, each once. Across publishers no order is promised: with several processes writing one user's
/// records, the cluster takes events from the log in position order (`Sources/SpotterPostgres/CLUSTER.md`).
/// Nothing is durable here; the log is the truth and clients fill gaps with `resume` (`BROKER.md`).
///
/// Owned by the loop thread like every engine. libnats runs its own threads (connection, reconnection,
/// delivery) and everything they report is handed to the loop through `Loop.execute`. It reconnects by itself,
/// for ever, and buffers publications meanwhile; on every (re)connect this process asks the others for their
/// full lists and sends its own, so presence heals after a NATS restart. The wire format is in `NATSWire.swift`.
public final class NATSBroker: ClusterBroker {
    public let nodeID: String
    public var presenceChanged: ((String, Bool) -> Void)?
    /// Called on the loop when the connection to NATS drops (false) or is back (true): for logs and health.
    public var connectionChanged: ((Bool) -> Void)?
    /// Whether the connection is up, as the loop last heard from libnats.
    public private(set) var isConnected = true
    /// Whether `publish` sends logged events on the user's subject too. A process that follows the log (cluster
    /// mode) makes every logged event from the log itself and sets this false: only presence, typing and other
    /// ephemeral events travel per user.
    public var sharesLoggedEvents = true

    let loop: Loop
    let logger: Logger
    let heartbeatMilliseconds: UInt64
    let deadAfterMilliseconds: UInt64
    /// This deployment's subjects (`--broker-subjects`).
    let subjects: NATSSubjects
    private let connection: NATSConnection
    private var timer: Timer?
    /// This process's subscribers, by user.
    private(set) var subscribers: [String: [BrokerSubscriber]] = [:]
    private var userSubscriptions: [String: NATSSubscription] = [:]
    private var presenceSubscription: NATSSubscription?
    private var logSubscription: NATSSubscription?
    private var logHandler: ((String) -> Void)?
    /// What the other processes report.
    var remote = RemotePresence()
    /// Local presence changes not yet announced (user → online), sent once per loop iteration.
    var unannounced: [String: Bool] = [:]
    /// Whether a failure to publish has been logged since the last success (once per outage, not per message).
    private var publishFailing = false
    private(set) var closed = false

    /// Connects at once (at most 2 s); a malformed URL or an unreachable server throws `NATSBrokerError`. Call on
    /// the loop thread. `nodeID` names this process in presence messages: `[A-Za-z0-9_-]`, unique in the cluster.
    public init(loop: Loop, url: String, nodeID: String = NATSBroker.randomNodeID(), heartbeatMilliseconds: UInt64 = 1000,
                deadAfterMilliseconds: UInt64 = 5000, subjects: NATSSubjects = .standard,
                logger: Logger = Logger(label: "spotter.nats")) throws {
        precondition(NATSWire.isPlain(nodeID), "a node id is [A-Za-z0-9_-]+ (it travels as one word)")
        precondition(heartbeatMilliseconds > 0 && deadAfterMilliseconds > heartbeatMilliseconds,
                     "a node is declared dead only after several missed beats")
        precondition(loop.isOnLoop, "NATSBroker belongs to its loop's thread")
        self.loop = loop
        self.nodeID = nodeID
        self.subjects = subjects
        self.logger = logger
        self.heartbeatMilliseconds = heartbeatMilliseconds
        self.deadAfterMilliseconds = deadAfterMilliseconds
        let sink = NATSSink(loop: loop)
        connection = try NATSConnection(url: url, name: "spotter-" + nodeID, sink: sink)
        sink.broker = self
        do {
            presenceSubscription = try connection.subscribe(subjects.presence)
        } catch {
            closed = true
            connection.close()
            throw error
        }
        let timer = Timer(loop: loop)
        timer.start(after: heartbeatMilliseconds, repeat: heartbeatMilliseconds) { [weak self] in self?.tick() }
        timer.unref()  // the broker alone does not keep a loop running
        self.timer = timer
        loop.everyIteration { [weak self] in self?.announceChanges() }
        announceEverything()
    }

    /// Dropping the broker (on the loop) closes it as `close()` does.
    deinit {
        shutDown(sayingGoodbye: true)
    }

    /// Says goodbye (the others drop this process's users at once), then closes the connection and its
    /// subscriptions. Idempotent. Local delivery still works afterwards; nothing more goes to NATS.
    public func close() {
        loop.assertOnLoop()
        shutDown(sayingGoodbye: true)
    }

    /// As kill -9 would leave things (tests): the beats stop and the connection goes, without a goodbye.
    func abandon() {
        shutDown(sayingGoodbye: false)
    }

    /// Publishes `payload` on `subject` as it is (tests: what a broken or hostile publisher would send).
    func sendRaw(_ subject: String, _ payload: String) {
        send(subject, payload)
    }

    private func shutDown(sayingGoodbye: Bool) {
        guard !closed else { return }
        timer?.close()
        timer = nil
        unannounced = [:]
        if sayingGoodbye {
            send(.goodbye(node: nodeID))
            // Down, libnats would hold the goodbye until the flush times out: others forget us by our silence.
            if isConnected { connection.flush() }
        }
        closed = true
        connection.close()
        for subscription in userSubscriptions.values { subscription.end() }
        userSubscriptions = [:]
        presenceSubscription?.end()
        presenceSubscription = nil
        logSubscription?.end()
        logSubscription = nil
        logHandler = nil
    }

    // MARK: - Broker

    public func publish(userID: String, cursor: Int64, frame: EventFrame) {
        loop.assertOnLoop()
        deliverLocally(userID, cursor: cursor, frame)
        guard sharesLoggedEvents else { return }
        send(subjects.subject(userID: userID), UserEvent.logged(cursor: cursor, frame: frame.json).payload)
    }

    public func publishEphemeral(userID: String, frame: EventFrame) {
        loop.assertOnLoop()
        deliverLocally(userID, cursor: nil, frame)
        send(subjects.subject(userID: userID), UserEvent.ephemeral(frame: frame.json).payload)
    }

    public func publishEphemeralLocally(userID: String, frame: EventFrame) {
        loop.assertOnLoop()
        deliverLocally(userID, cursor: nil, frame)
    }

    public func subscribe(_ subscriber: BrokerSubscriber, userID: String) {
        loop.assertOnLoop()
        let wasOnline = isOnline(userID)
        let first = subscribers[userID] == nil
        subscribers[userID, default: []].append(subscriber)
        guard first else { return }
        if !closed {
            do {
                userSubscriptions[userID] = try connection.subscribe(subjects.subject(userID: userID))
            } catch {
                logger.error("cannot subscribe to a user's subject: their events from other processes are missed here",
                             metadata: ["error": "\(error)"])
            }
        }
        localPresenceChanged(userID, online: true, wasOnline: wasOnline)
    }

    public func unsubscribe(_ subscriber: BrokerSubscriber, userID: String) {
        loop.assertOnLoop()
        guard var list = subscribers[userID] else { return }
        let before = list.count
        list.removeAll { $0 === subscriber }
        guard list.count != before else { return }
        guard list.isEmpty else {
            subscribers[userID] = list
            return
        }
        subscribers[userID] = nil
        userSubscriptions.removeValue(forKey: userID)?.end()
        localPresenceChanged(userID, online: false, wasOnline: true)
    }

    public func isOnline(_ userID: String) -> Bool {
        subscribers[userID] != nil || remote.isOnline(userID)
    }

    public func localSubscribers(_ userID: String) -> [BrokerSubscriber] { subscribers[userID] ?? [] }

    // MARK: - The log stream

    /// Publishes a batch of committed records (`LogStreamCodec` text) for every other process to follow.
    public func publishLog(_ batch: String) {
        send(subjects.log, batch)
    }

    /// Calls `handler` on the loop with every batch other processes publish, in each publisher's order. A batch
    /// lost in transit is the follower's to read from the store (`LogSequencer.gap`).
    public func followLog(_ handler: @escaping (String) -> Void) throws {
        logHandler = handler
        if logSubscription == nil, !closed { logSubscription = try connection.subscribe(subjects.log) }
    }

    // MARK: - From NATS (on the loop)

    func received(subject: String, payload: String) {
        guard !closed else { return }
        switch subject {
        case subjects.presence: receivedPresence(payload)
        case subjects.log: logHandler?(payload)
        default: receivedEvent(subject: subject, payload: payload)
        }
    }

    private func receivedEvent(subject: String, payload: String) {
        // A message for a user whose last subscriber left while it was in flight: nobody to give it to.
        guard let userID = subjects.userID(subject: subject), subscribers[userID] != nil else { return }
        guard let event = UserEvent(payload: payload) else {
            logger.warning("malformed event on a user's subject, dropped", metadata: ["subject": "\(subject)"])
            return
        }
        switch event {
        case .logged(let cursor, let json): deliverLocally(userID, cursor: cursor, EventFrame(json))
        case .ephemeral(let json): deliverLocally(userID, cursor: nil, EventFrame(json))
        }
    }

    func linkChanged(up: Bool) {
        guard !closed, up != isConnected else { return }
        isConnected = up
        if up {
            logger.notice("NATS connection back", metadata: ["url": "\(NATSWire.loggable(url: connection.url))"])
            announceEverything()
        } else {
            logger.warning("NATS connection lost; reconnecting", metadata: ["url": "\(NATSWire.loggable(url: connection.url))"])
        }
        connectionChanged?(up)
    }

    // MARK: - To NATS

    func send(_ message: PresenceMessage) {
        send(subjects.presence, message.text)
    }

    private func send(_ subject: String, _ payload: String) {
        guard !closed else { return }
        let status = connection.publish(subject, payload)
        if status == NATS_OK {
            publishFailing = false
        } else if status == NATS_MAX_PAYLOAD {
            // Not an outage: this one message is too big for NATS (its subscribers elsewhere `resume` to get it).
            logger.error("a message over NATS's maximum payload was not sent to other processes",
                         metadata: ["subject": "\(subject)", "bytes": "\(payload.utf8.count)"])
        } else if !publishFailing {
            publishFailing = true
            logger.warning("publishing to NATS fails; other processes miss live events until it is back",
                           metadata: ["status": "\(NATSConnection.text(status))"])
        }
    }

    /// A logged event (with its cursor) or an ephemeral one (nil) to this process's subscribers of the user.
    private func deliverLocally(_ userID: String, cursor: Int64?, _ frame: EventFrame) {
        guard let list = subscribers[userID] else { return }
        if let cursor {
            for subscriber in list { subscriber.deliver(cursor: cursor, frame: frame) }
        } else {
            for subscriber in list { subscriber.deliverEphemeral(frame) }
        }
    }

    /// 16 hex digits: unique enough to name a process for the cluster's lifetime.
    public static func randomNodeID() -> String {
        String(UInt64.random(in: .min ... .max), radix: 16).leftPadded(to: 16)
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}

/// Something that receives what a broker delivers: in this process, one
/// live socket of one user.
///
/// Events come as `EventFrame`s: made once per event and shared by every
/// subscriber (a socket sends the bytes as they are).
public protocol BrokerSubscriber: AnyObject {
    /// A logged event (it has a position in the log: `cursor`). Delivered in
    /// cursor order per user, each at most once per subscriber.
    func deliver(cursor: Int64, frame: EventFrame)
    /// An ephemeral event (presence, typing): not logged, may be dropped.
    func deliverEphemeral(_ frame: EventFrame)
}

/// Who is online, and when that changes.
public protocol PresenceManager: AnyObject {
    /// Whether the user has at least one subscriber (anywhere the engine can see).
    func isOnline(_ userID: String) -> Bool
    /// Called with (user, online) when a user's first subscriber arrives or last one leaves.
    var presenceChanged: ((String, Bool) -> Void)? { get set }
}

/// The fan-out seam: committed events go in by user, and come out at every
/// subscriber of that user. Messaging publishes to it and never touches a
/// socket; the engine decides where subscribers live (this process, or
/// every process of a cluster). See `BROKER.md` next to this file for what
/// crosses it and what each side guarantees.
///
/// Engines are owned by one thread (the server's loop) and are not Sendable:
/// a cluster engine hands what arrives from its network to that thread.
public protocol Broker: PresenceManager {
    /// Delivers a logged event to every subscriber of `userID`. Publishers
    /// call it in cursor order (the order records were committed).
    func publish(userID: String, cursor: Int64, frame: EventFrame)
    /// Delivers an ephemeral event to every subscriber of `userID`.
    func publishEphemeral(userID: String, frame: EventFrame)
    /// Delivers an ephemeral event to this process's subscribers of `userID` only: for what every process works
    /// out for itself (a presence change, which every process of a cluster sees flip), so it reaches each device
    /// once.
    func publishEphemeralLocally(userID: String, frame: EventFrame)
    func subscribe(_ subscriber: BrokerSubscriber, userID: String)
    func unsubscribe(_ subscriber: BrokerSubscriber, userID: String)
    /// This process's subscribers of the user (for actions on local sockets,
    /// such as closing the sockets of a revoked session).
    func localSubscribers(_ userID: String) -> [BrokerSubscriber]
}

extension Broker {
    /// A logged event given as its JSON text.
    public func publish(userID: String, cursor: Int64, frame json: String) {
        publish(userID: userID, cursor: cursor, frame: EventFrame(json))
    }

    /// An ephemeral event given as its JSON text.
    public func publishEphemeral(userID: String, frame json: String) {
        publishEphemeral(userID: userID, frame: EventFrame(json))
    }

    /// An ephemeral event for this process's subscribers, given as its JSON text.
    public func publishEphemeralLocally(userID: String, frame json: String) {
        publishEphemeralLocally(userID: userID, frame: EventFrame(json))
    }
}

/// The broker of one process: subscribers in a dictionary by user. Presence
/// is this process's view.
public final class InProcessBroker: Broker {
    private var subscribers: [String: [BrokerSubscriber]] = [:]
    public var presenceChanged: ((String, Bool) -> Void)?

    public init() {}

    public func publish(userID: String, cursor: Int64, frame: EventFrame) {
        guard let list = subscribers[userID] else { return }
        for subscriber in list { subscriber.deliver(cursor: cursor, frame: frame) }
    }

    public func publishEphemeral(userID: String, frame: EventFrame) {
        guard let list = subscribers[userID] else { return }
        for subscriber in list { subscriber.deliverEphemeral(frame) }
    }

    /// Every subscriber is local here.
    public func publishEphemeralLocally(userID: String, frame: EventFrame) {
        publishEphemeral(userID: userID, frame: frame)
    }

    public func subscribe(_ subscriber: BrokerSubscriber, userID: String) {
        let first = subscribers[userID]?.isEmpty ?? true
        subscribers[userID, default: []].append(subscriber)
        if first { presenceChanged?(userID, true) }
    }

    public func unsubscribe(_ subscriber: BrokerSubscriber, userID: String) {
        guard var list = subscribers[userID] else { return }
        let before = list.count
        list.removeAll { $0 === subscriber }
        guard list.count != before else { return }
        if list.isEmpty {
            subscribers[userID] = nil
            presenceChanged?(userID, false)
        } else {
            subscribers[userID] = list
        }
    }

    public func isOnline(_ userID: String) -> Bool { !(subscribers[userID]?.isEmpty ?? true) }

    public func localSubscribers(_ userID: String) -> [BrokerSubscriber] { subscribers[userID] ?? [] }

}

/// A broker between the processes of a cluster: besides users' events it carries the log stream — each
/// process's committed records, which every process follows in position order (`LogSequencer`) — and, once a
/// process follows the log, logged events stay local: every process makes its own subscribers' events from the
/// records it follows, so a user's events come in log order whichever process wrote them.
public protocol ClusterBroker: Broker {
    /// Publishes a batch of committed records (`LogStreamCodec` text) to the other processes.
    func publishLog(_ batch: String)
    /// Calls `handler` on the loop with every batch another process publishes.
    func followLog(_ handler: @escaping (String) -> Void) throws
    /// Whether `publish` also sends logged events to the other processes (false once the process follows the log).
    var sharesLoggedEvents: Bool { get set }
    /// Called on the loop when the connection between processes drops (false) or is back (true).
    var connectionChanged: ((Bool) -> Void)? { get set }
    /// Says goodbye to the other processes and closes the connection.
    func close()
}

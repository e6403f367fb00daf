import CNATS
import EventLoop
import Logging
import SpotterBroker

/// Why the NATS broker could not start.
public struct NATSBrokerError: Error, CustomStringConvertible, Sendable {
    public let url: String
    public let status: String

    public var description: String { "cannot connect to NATS at \(url): \(status)" }
}

/// The broker of a cluster: every Spotter process connects to one NATS server (or cluster) and the events of a
/// user travel on that user's subject to every process holding one of the user's sockets. Presence is
/// cluster-wide: each process announces its users coming and going, beats every `heartbeat` and is forgotten
/// (its users offline) when its beats stop for `deadAfter` — a process killed with kill -9 leaves no ghosts.
///
/// Owned by the loop thread like every engine; libnats calls back on its own threads and everything it hands
/// over runs on the loop through `Loop.execute`. libnats reconnects by itself (for ever, every 250 ms) and
/// buffers publications meanwhile; on every (re)connect the process announces all its users again and asks the
/// others to do the same, so presence heals after a NATS restart.
///
/// Wire format (all text): a user's subject is `spotter.user.<id>` (ids of `[A-Za-z0-9_-]` as they are, any
/// other as `=` and its UTF-8 in hex, so no id can reach another's subject); a logged event is
/// `L<cursor> <frame>`, an ephemeral one `E <frame>`. Presence goes on `spotter.presence`: `B <node>` (beat),
/// `U <node> <id>…` (online), `D <node> <id>…` (offline), `S <node> <k>/<n> <id>…` (part k of n of my full
/// list: the receiver swaps it in once all n arrived, so nobody flickers offline), `H <node>` (hello: everyone,
/// send your full list), `G <node>` (goodbye). Committed records travel on `spotter.log` (`publishLog`,
/// `followLog`).
///
/// Order: NATS keeps each publisher's order, so a user's events published by one process arrive in that order.
/// Across publishers the order is the log's job (see `Sources/SpotterPostgres/CLUSTER.md`).
public final class NATSBroker: Broker {
    public let nodeID: String
    public var presenceChanged: ((String, Bool) -> Void)?
    /// Called on the loop when the connection to NATS drops (false) or comes back (true).
    public var connectionChanged: ((Bool) -> Void)?
    public private(set) var isConnected = true

    private let loop: Loop
    private let url: String
    private let connection: NATSConnection
    private let logger: Logger
    private let heartbeat: UInt64
    private let deadAfter: UInt64
    private var timer: Timer?
    private var subscribers: [String: [BrokerSubscriber]] = [:]
    private var userSubscriptions: [String: NATSSubscription] = [:]
    /// Other processes: when each last beat, and the users it reported online.
    private var nodes: [String: (lastBeat: UInt64, users: Set<String>)] = [:]
    /// How many other processes report each user online.
    private var remoteCount: [String: Int] = [:]
    /// Full lists arriving in parts, by node.
    private var partialLists: [String: Set<String>] = [:]
    private var presenceSubscription: NATSSubscription?
    private var logSubscription: NATSSubscription?
    private var logHandler: ((String) -> Void)?
    private var publishFailing = false
    private var closed = false

    /// Connects at once; an unreachable server throws (`NATSBrokerError`). Call on the loop thread.
    public init(loop: Loop, url: String, nodeID: String = NATSBroker.randomNodeID(), heartbeatMilliseconds: UInt64 = 1000,
                deadAfterMilliseconds: UInt64 = 5000, logger: Logger = Logger(label: "spotter.nats")) throws {
        self.loop = loop
        self.url = url
        self.nodeID = nodeID
        self.logger = logger
        heartbeat = heartbeatMilliseconds
        deadAfter = deadAfterMilliseconds
        let sink = NATSSink(loop: loop)
        connection = try NATSConnection(url: url, name: "spotter-" + nodeID, sink: sink)
        sink.broker = self
        presenceSubscription = try connection.subscribe("spotter.presence")
        announceEverything()
        let timer = Timer(loop: loop)
        timer.start(after: heartbeat, repeat: heartbeat) { [unowned self] in tick() }
        timer.unref()  // the broker alone does not keep a loop running
        self.timer = timer
    }

    /// Says goodbye (the others drop this process's users at once), unsubscribes and closes the connection.
    public func close() {
        guard !closed else { return }
        closed = true
        timer?.close()
        timer = nil
        send("spotter.presence", "G \(nodeID)")
        connection.flush()
        connection.close()
    }

    // MARK: - The log stream

    /// Publishes a batch of committed records (`LogStreamCodec` text) for every other process to follow.
    public func publishLog(_ batch: String) {
        send("spotter.log", batch)
    }

    /// Calls `handler` on the loop with every batch other processes publish, in each publisher's order. A batch
    /// lost in transit is the follower's to read from the store (`LogSequencer.gap`).
    public func followLog(_ handler: @escaping (String) -> Void) throws {
        logHandler = handler
        if logSubscription == nil { logSubscription = try connection.subscribe("spotter.log") }
    }

    /// As kill -9 would leave things (tests): the beats stop and the connection goes, without a goodbye.
    func abandon() {
        guard !closed else { return }
        closed = true
        timer?.close()
        timer = nil
        connection.close()
    }

    /// Whether `node` has reported `user` online here (tests).
    func remoteReports(node: String, user: String) -> Bool {
        nodes[node]?.users.contains(user) ?? false
    }

    // MARK: - Broker

    public func publish(userID: String, cursor: Int64, frame: String) {
        deliverLocally(userID) { $0.deliver(cursor: cursor, frame: frame) }
        send(Self.subject(userID), "L\(cursor) \(frame)")
    }

    public func publishEphemeral(userID: String, frame: String) {
        deliverLocally(userID) { $0.deliverEphemeral(frame) }
        send(Self.subject(userID), "E \(frame)")
    }

    public func subscribe(_ subscriber: BrokerSubscriber, userID: String) {
        let wasOnline = isOnline(userID)
        let first = subscribers[userID]?.isEmpty ?? true
        subscribers[userID, default: []].append(subscriber)
        guard first else { return }
        do {
            userSubscriptions[userID] = try connection.subscribe(Self.subject(userID))
        } catch {
            logger.error("cannot subscribe to a user's subject; their events from other processes are missed until they reconnect",
                         metadata: ["error": "\(error)"])
        }
        send("spotter.presence", "U \(nodeID) \(Self.token(userID))")
        if !wasOnline { presenceChanged?(userID, true) }
    }

    public func unsubscribe(_ subscriber: BrokerSubscriber, userID: String) {
        guard var list = subscribers[userID] else { return }
        let before = list.count
        list.removeAll { $0 === subscriber }
        guard list.count != before else { return }
        guard list.isEmpty else {
            subscribers[userID] = list
            return
        }
        subscribers[userID] = nil
        userSubscriptions.removeValue(forKey: userID)?.unsubscribe()
        send("spotter.presence", "D \(nodeID) \(Self.token(userID))")
        if !isOnline(userID) { presenceChanged?(userID, false) }
    }

    public func isOnline(_ userID: String) -> Bool {
        !(subscribers[userID]?.isEmpty ?? true) || (remoteCount[userID] ?? 0) > 0
    }

    public func localSubscribers(_ userID: String) -> [BrokerSubscriber] { subscribers[userID] ?? [] }

    // MARK: - From NATS (on the loop)

    fileprivate func received(subject: String, payload: String) {
        if subject == "spotter.presence" {
            presence(payload)
            return
        }
        if subject == "spotter.log" {
            logHandler?(payload)
            return
        }
        guard let userID = Self.userID(subject: subject), subscribers[userID] != nil else { return }
        if payload.hasPrefix("E ") {
            let frame = String(payload.dropFirst(2))
            deliverLocally(userID) { $0.deliverEphemeral(frame) }
        } else if payload.hasPrefix("L"), let space = payload.firstIndex(of: " "),
                  let cursor = Int64(payload[payload.index(after: payload.startIndex)..<space]) {
            let frame = String(payload[payload.index(after: space)...])
            deliverLocally(userID) { $0.deliver(cursor: cursor, frame: frame) }
        } else {
            logger.warning("malformed event on a user's subject, dropped", metadata: ["subject": "\(subject)"])
        }
    }

    fileprivate func connectionEvent(connected: Bool) {
        guard !closed, connected != isConnected else { return }
        isConnected = connected
        logger.notice(connected ? "NATS connection back" : "NATS connection lost", metadata: ["url": "\(url)"])
        if connected {
            publishFailing = false
            announceEverything()
        }
        connectionChanged?(connected)
    }

    private func presence(_ payload: String) {
        let words = payload.split(separator: " ").map(String.init)
        guard words.count >= 2, words[1] != nodeID else { return }
        let node = words[1]
        let now = loop.nowMilliseconds
        let users = words.dropFirst(2).compactMap(Self.userID(token:))
        switch words[0] {
        case "B":
            if nodes[node] == nil { nodes[node] = (now, []) } else { nodes[node]!.lastBeat = now }
        case "U":
            if nodes[node] == nil { nodes[node] = (now, []) }
            nodes[node]!.lastBeat = now
            for user in users where nodes[node]!.users.insert(user).inserted { count(user, +1) }
        case "D":
            for user in users where nodes[node]?.users.remove(user) != nil { count(user, -1) }
        case "S":
            guard words.count >= 3, let slash = words[2].firstIndex(of: "/"),
                  let part = Int(words[2][..<slash]), let parts = Int(words[2][words[2].index(after: slash)...]) else { return }
            let listed = words.dropFirst(3).compactMap(Self.userID(token:))
            if part == 1 { partialLists[node] = [] }
            partialLists[node, default: []].formUnion(listed)
            guard part == parts, let full = partialLists.removeValue(forKey: node) else { return }
            let previous = nodes[node]?.users ?? []
            nodes[node] = (now, full)
            for user in full.subtracting(previous) { count(user, +1) }
            for user in previous.subtracting(full) { count(user, -1) }
        case "G":
            forget(node)
        case "H":
            nodes[node] = nodes[node] ?? (now, [])
            announceUsers()
        default:
            logger.warning("malformed presence message, dropped")
        }
    }

    /// Another process's count for `user` changes by `delta`; presence follows when the cluster-wide answer flips.
    private func count(_ user: String, _ delta: Int) {
        let wasOnline = isOnline(user)
        let next = (remoteCount[user] ?? 0) + delta
        remoteCount[user] = next > 0 ? next : nil
        let online = isOnline(user)
        if online != wasOnline { presenceChanged?(user, online) }
    }

    private func forget(_ node: String) {
        guard let gone = nodes.removeValue(forKey: node) else { return }
        for user in gone.users { count(user, -1) }
    }

    /// Beats, and forgets processes whose beats stopped.
    private func tick() {
        send("spotter.presence", "B \(nodeID)")
        let now = loop.nowMilliseconds
        for (node, state) in nodes where now &- state.lastBeat > deadAfter {
            logger.notice("a Spotter process stopped beating; its users are offline", metadata: ["node": "\(node)"])
            forget(node)
        }
    }

    // MARK: - To NATS

    /// Asks every other process for its full list and sends ours.
    private func announceEverything() {
        send("spotter.presence", "H \(nodeID)")
        announceUsers()
    }

    private func announceUsers() {
        // Parts well under NATS's default 1 MB payload.
        var parts: [[String]] = [[]]
        var size = 0
        for user in subscribers.keys {
            let token = Self.token(user)
            if size + token.utf8.count > 60_000 {
                parts.append([])
                size = 0
            }
            parts[parts.count - 1].append(token)
            size += token.utf8.count + 1
        }
        for (index, part) in parts.enumerated() {
            send("spotter.presence", (["S", nodeID, "\(index + 1)/\(parts.count)"] + part).joined(separator: " "))
        }
    }

    private func send(_ subject: String, _ payload: String) {
        do {
            try connection.publish(subject, payload)
        } catch {
            // Once per outage: the log is the truth, and clients fill what they missed with `resume`.
            if !publishFailing {
                publishFailing = true
                logger.warning("publishing to NATS fails; other processes miss live events until it is back",
                               metadata: ["error": "\(error)"])
            }
        }
    }

    private func deliverLocally(_ userID: String, _ body: (BrokerSubscriber) -> Void) {
        guard let list = subscribers[userID] else { return }
        for subscriber in list { body(subscriber) }
    }

    // MARK: - Names

    public static func randomNodeID() -> String {
        (0..<8).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
    }

    /// A user id as one subject token: plain ids as they are, anything else `=` + hex of its UTF-8.
    static func token(_ userID: String) -> String {
        let plain = !userID.isEmpty && userID.utf8.allSatisfy { byte in
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 45 || byte == 95
        }
        if plain { return userID }
        return "=" + userID.utf8.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }

    static func userID(token: String) -> String? {
        guard token.hasPrefix("=") else { return token.isEmpty ? nil : token }
        let hex = Array(token.utf8.dropFirst())
        guard hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: hex.count, by: 2) {
            guard let byte = UInt8(String(decoding: hex[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func subject(_ userID: String) -> String { "spotter.user." + token(userID) }

    static func userID(subject: String) -> String? {
        guard subject.hasPrefix("spotter.user.") else { return nil }
        return userID(token: String(subject.dropFirst("spotter.user.".count)))
    }
}

/// Where libnats's callbacks land: it hands each message to the loop. Lives as long as the process (libnats may
/// call back on its threads until its connection is destroyed, and later than any Swift owner could know), so
/// it is retained once and never released: a few bytes per broker.
final class NATSSink: @unchecked Sendable {
    let loop: Loop
    /// Read and written on the loop only.
    weak var broker: NATSBroker?

    init(loop: Loop) {
        self.loop = loop
    }

    func message(subject: String, payload: String) {
        loop.execute { [self] in broker?.received(subject: subject, payload: payload) }
    }

    func connection(_ connected: Bool) {
        loop.execute { [self] in broker?.connectionEvent(connected: connected) }
    }
}

/// The libnats connection. Its functions are thread-safe; the pointer is only read after init.
final class NATSConnection: @unchecked Sendable {
    private let raw: OpaquePointer
    private let sink: UnsafeMutableRawPointer

    init(url: String, name: String, sink: NATSSink) throws {
        self.sink = Unmanaged.passRetained(sink).toOpaque()
        var options: OpaquePointer?
        guard natsOptions_Create(&options) == NATS_OK, let options else {
            throw NATSBrokerError(url: url, status: "out of memory")
        }
        defer { natsOptions_Destroy(options) }
        natsOptions_SetURL(options, url)
        natsOptions_SetName(options, name)
        natsOptions_SetTimeout(options, 2000)
        natsOptions_SetAllowReconnect(options, true)
        natsOptions_SetMaxReconnect(options, -1)
        natsOptions_SetReconnectWait(options, 250)
        natsOptions_SetNoEcho(options, true)
        natsOptions_SetDisconnectedCB(options, { _, closure in
            Unmanaged<NATSSink>.fromOpaque(closure!).takeUnretainedValue().connection(false)
        }, self.sink)
        natsOptions_SetReconnectedCB(options, { _, closure in
            Unmanaged<NATSSink>.fromOpaque(closure!).takeUnretainedValue().connection(true)
        }, self.sink)
        var connection: OpaquePointer?
        let status = natsConnection_Connect(&connection, options)
        guard status == NATS_OK, let connection else {
            throw NATSBrokerError(url: url, status: String(cString: natsStatus_GetText(status)))
        }
        raw = connection
    }

    func publish(_ subject: String, _ payload: String) throws {
        var text = payload
        let status = text.withUTF8 { bytes in
            natsConnection_Publish(raw, subject, bytes.baseAddress, Int32(bytes.count))
        }
        guard status == NATS_OK else { throw NATSBrokerError(url: subject, status: String(cString: natsStatus_GetText(status))) }
    }

    func subscribe(_ subject: String) throws -> NATSSubscription {
        var subscription: OpaquePointer?
        let status = natsConnection_Subscribe(&subscription, raw, subject, { _, _, message, closure in
            guard let message else { return }
            let subject = String(cString: natsMsg_GetSubject(message))
            let length = Int(natsMsg_GetDataLength(message))
            let payload = natsMsg_GetData(message).map { data in
                String(decoding: UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: length), as: UTF8.self)
            } ?? ""
            natsMsg_Destroy(message)
            Unmanaged<NATSSink>.fromOpaque(closure!).takeUnretainedValue().message(subject: subject, payload: payload)
        }, sink)
        guard status == NATS_OK, let subscription else {
            throw NATSBrokerError(url: subject, status: String(cString: natsStatus_GetText(status)))
        }
        return NATSSubscription(raw: subscription)
    }

    func flush() {
        _ = natsConnection_FlushTimeout(raw, 1000)
    }

    /// Closes the connection; libnats stops calling back once it is destroyed.
    func close() {
        natsConnection_Close(raw)
        natsConnection_Destroy(raw)
    }
}

/// One subscription; unsubscribing ends its callbacks.
final class NATSSubscription {
    private let raw: OpaquePointer

    init(raw: OpaquePointer) {
        self.raw = raw
    }

    func unsubscribe() {
        natsSubscription_Unsubscribe(raw)
        natsSubscription_Destroy(raw)
    }
}

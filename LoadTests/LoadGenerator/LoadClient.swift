import EventLoop
import FoundationEssentials
import WebSocket
import LoadSupport

/// One signed-in user's socket on `/v1/ws`, on the runner's loop. Loop thread only.
///
/// connect → upgrade (token in the query) → `hello` (its cursor starts the
/// cursor check: every logged event's cursor, a position in the server's
/// log, must be higher than the one before) → open. After a drop it
/// reconnects with the last cursor it processed in the URL (`&cursor=`), so
/// the server replays what was missed before anything live; `live` ends the
/// replay. Gaps show in the per-thread `seq` checks, not in cursors, which
/// are not consecutive per user.
final class LoadClient: ClientSocketOwner {
    /// `connecting` lasts until the 101 (connect and upgrade).
    enum State { case idle, connecting, waitingHello, open, failed, closed }

    struct PendingSend {
        var sentAt: UInt64
        var thread: Int
        var frame: [UInt8]
    }

    let index: Int
    let isCoach: Bool
    let userID: String
    let token: String
    /// Index of its server in `config.ports`.
    let server: Int
    unowned let runner: Runner
    private(set) var state: State = .idle
    private(set) var startedAtMs: UInt64 = 0
    private(set) var startedAtNanos: UInt64 = 0
    /// The connection of the moment (a new one after each drop).
    private var socket: ClientSocket?
    /// Highest cursor processed; -1 before the first hello.
    private(set) var lastCursor: Int64 = -1
    /// A `resume` is outstanding.
    private(set) var resuming = false
    /// Logged events received since the `hello` of a reconnect (the replay).
    private var replayedSinceHello = 0
    private(set) var connects = 0
    /// Threads this user takes part in (runner indexes).
    var threads: [Int] = []
    /// Sends without a reply yet, by their number.
    private(set) var pending: [UInt64: PendingSend] = [:]
    private var nextSend: UInt64 = 0
    private var nextCommand: UInt64 = 0
    /// The latest total_unread this user got in an `unread` event.
    private(set) var lastTotalUnread: Int64?
    /// Message contents seen (sender index << 32 | number), to catch a message stored twice.
    private var seenContent: Set<UInt64> = []
    var trackContent = false
    /// `messages.used` of the last `quota` event (servers with `--tiers`).
    private(set) var lastQuotaUsed: Int64?
    /// Sends acknowledged, and refused with `quota_exceeded` (the `quota` scenario).
    private(set) var accepted = 0
    private(set) var quotaRefused = 0
    /// The first send's frame and seq, for the `quota` scenario's retry; the retry's outcome.
    private var firstSend: (frame: [UInt8], seq: Int64)?
    private var retrying = false
    private(set) var retryOutcome: String?
    /// Frames the server sent that this client answered itself (pongs to keepalive pings).
    private(set) var pongsSent = 0
    static let padding = Array("-spotter-load-chat-message".utf8)
    static let maxHeadBytes = 16384

    init(index: Int, isCoach: Bool, userID: String, token: String, server: Int, runner: Runner) {
        self.index = index
        self.isCoach = isCoach
        self.userID = userID
        self.token = token
        self.server = server
        self.runner = runner
    }

    var isOpen: Bool { state == .open }
    var isLive: Bool { state == .open && !resuming }
    var isPending: Bool { state == .connecting || state == .waitingHello }
    var pendingCount: Int { pending.count }

    // MARK: - Connect

    func connect(to address: SocketAddress, from source: SocketAddress?) {
        state = .connecting
        startedAtMs = runner.loop.nowMilliseconds
        startedAtNanos = monotonicNanos()
        connects += 1
        let socket = ClientSocket(owner: self, actions: runner.actions, maxMessageBytes: 1 << 22, maxHeadBytes: Self.maxHeadBytes)
        self.socket = socket
        let resumeFrom = lastCursor >= 0 ? "&cursor=\(lastCursor)" : ""
        socket.connect(loop: runner.loop, to: address, from: source, target: "/v1/ws?access_token=\(token)\(resumeFrom)",
                       host: runner.config.hostHeader(server: server), subprotocol: "spotter.v1")
    }

    /// Gives up on a connect that did not reach `hello`.
    func fail(_ reason: String) {
        guard isPending else { return }
        state = .failed
        let old = socket
        socket = nil
        old?.close()
        runner.connectSettled(self, failure: reason)
    }

    func socketOpened(_ socket: ClientSocket) {
        guard socket === self.socket else { return }
        state = .waitingHello
    }

    func socket(_ socket: ClientSocket, failedToOpen reason: String) {
        guard socket === self.socket else { return }
        fail(reason)
    }

    // MARK: - Reading

    func socket(_ socket: ClientSocket, perform action: WebSocketSession.Action) {
        guard socket === self.socket else { return }
        switch action {
        case .deliver(.text(let frame)): handleFrame(frame)
        case .deliver: runner.protocolError("unexpected binary frame")
        case .send(let bytes):
            if socket.sessionIsOpen { pongsSent += 1 }
            socket.send(framed: bytes)
        case .receivedPong: break
        case .closeConnection(let code):
            let wasOpen = state == .open || state == .waitingHello
            drop()
            if wasOpen { runner.clientLost(self, reason: "server closed with \(code.rawValue)") }
        }
    }

    func socket(_ socket: ClientSocket, ended error: UVError) {
        guard socket === self.socket else { return socket.close() }
        if isPending {
            fail("ended before hello: \(error.name)")
            return
        }
        let wasUp = state == .open
        drop()
        if wasUp { runner.clientLost(self, reason: "connection ended without a close frame: \(error.name)") }
    }

    func socketClosed(_ socket: ClientSocket) {
        if socket === self.socket { self.socket = nil }
    }

    // MARK: - Frames

    private func handleFrame(_ frame: [UInt8]) {
        frame.withUnsafeBufferPointer { buffer in
            let scan = Scan(bytes: buffer)
            if scan.hasPrefix(Key.replyPrefix) {
                handleReply(scan)
            } else if scan.hasPrefix(Key.cursorPrefix) {
                handleEvent(scan)
            } else if scan.hasPrefix(Key.quotaPrefix), let messages = scan.after(Key.messages) {
                lastQuotaUsed = scan.int(Key.used, from: messages)
            }
            // presence, typing, auth.expiring: not logged, nothing to check
        }
    }

    private func handleEvent(_ scan: Scan) {
        guard let cursor = scan.int(Key.cursor), let type = scan.stringRange(Key.type) else {
            return runner.protocolError("event without cursor or type")
        }
        let first = scan.bytes[type.lowerBound]
        if first == UInt8(ascii: "h") {  // hello
            let reconnecting = lastCursor >= 0
            if !reconnecting { lastCursor = cursor }
            state = .open
            runner.connectSettled(self, failure: nil)
            if reconnecting {
                resuming = true
                replayedSinceHello = 0
            }
            return
        }
        if first == UInt8(ascii: "l") {  // live: the replay asked for in the URL is complete
            if resuming {
                resuming = false
                runner.resumed(self, replayed: replayedSinceHello)
                // Sends that lost their reply in the drop go again with the same client_message_id.
                for number in pending.keys.sorted() { if let frame = pending[number]?.frame { sendFrame(frame) } }
            }
            return
        }
        // A logged event: message, unread or receipt.
        guard cursor > lastCursor else { return runner.cursorDuplicate() }
        if resuming { replayedSinceHello += 1 }
        lastCursor = cursor
        if first == UInt8(ascii: "m") {
            handleMessage(scan)
        } else if first == UInt8(ascii: "s") {
            runner.sessionsDriver?.event(by: self, frame: scan.bytes)
        } else if first == UInt8(ascii: "u") {
            lastTotalUnread = scan.int(Key.totalUnread)
        }
        if first == UInt8(ascii: "m"), let total = scan.int(Key.totalUnread) {
            lastTotalUnread = total  // a message carries the reader's badge too
        }
    }

    private func handleMessage(_ scan: Scan) {
        guard let threadID = scan.string(Key.threadID), let seq = scan.int(Key.seq),
              let sender = scan.stringRange(Key.senderID) else {
            return runner.protocolError("message event without thread_id, seq or sender_id")
        }
        let fromSelf = scan.bytes.count > 0 && sender.count == userID.utf8.count
            && userID.utf8.elementsEqual(UnsafeBufferPointer(rebasing: scan.bytes[sender]))
        var stamp: UInt64?
        if let text = scan.stringRange(Key.text), text.count >= 16 { stamp = scan.hex(at: text.lowerBound, count: 16) }
        if trackContent, !fromSelf, let cmid = scan.stringRange(Key.clientMessageID),
           let (senderIndex, end) = scan.decimal(at: cmid.lowerBound), end < cmid.upperBound,
           let (number, _) = scan.decimal(at: end + 1) {
            if !seenContent.insert(senderIndex << 32 | number).inserted { runner.contentDuplicate() }
        }
        runner.messageSeen(by: self, threadID: threadID, seq: seq, fromSelf: fromSelf, stamp: stamp)
    }

    private func handleReply(_ scan: Scan) {
        guard let id = scan.stringRange(Key.id), !id.isEmpty else { return runner.protocolError("reply without id") }
        let kind = scan.bytes[id.lowerBound]
        guard let (number, _) = scan.decimal(at: id.lowerBound + 1) else { return runner.protocolError("reply with a foreign id") }
        let ok = scan.after(Key.okTrue) != nil
        let errorCode = ok ? nil : scan.string(Key.code)
        switch kind {
        case UInt8(ascii: "m"):
            guard let sent = pending.removeValue(forKey: number) else { return runner.protocolError("reply to an unknown send") }
            if retrying, number == 0 {
                retrying = false
                let seq = scan.int(Key.seq)
                retryOutcome = ok ? (seq == firstSend?.seq ? "same seq" : "seq \(seq ?? -1), was \(firstSend?.seq ?? -1)") : (errorCode ?? "refused")
                return
            }
            if ok, let seq = scan.int(Key.seq) {
                accepted += 1
                if number == 0 { firstSend = (sent.frame, seq) }
                runner.sendAcked(by: self, thread: sent.thread, seq: seq, sentAt: sent.sentAt)
            } else if errorCode == "quota_exceeded", runner.config.scenario == "quota" {
                quotaRefused += 1
                runner.sendRefused(sentAt: sent.sentAt)
            } else {
                runner.commandFailed(errorCode ?? "reply without seq")
            }
        case UInt8(ascii: "r"):
            if ok { runner.readAcked(by: self, threadID: scan.string(Key.threadID), readSeq: scan.int(Key.readSeq)) }
            else { runner.commandFailed(errorCode ?? "read failed") }
        case UInt8(ascii: "t"):
            if ok { runner.threadsAnswered(by: self, totalUnread: scan.int(Key.totalUnread), scan: scan) }
            else { runner.commandFailed(errorCode ?? "threads failed") }
        case UInt8(ascii: "s"):
            runner.sessionsDriver?.reply(number: number, frame: scan.bytes)
        case UInt8(ascii: "c"):
            if ok { runner.sessionsDriver?.listAnswered(by: self, frame: scan.bytes) }
            else { runner.commandFailed(errorCode ?? "sessions failed") }
        default:
            runner.protocolError("reply with a foreign id")
        }
    }

    // MARK: - Commands

    private func nextCommandID() -> UInt64 {
        nextCommand += 1
        return nextCommand
    }

    /// Sends a text message on `threadID`; the text starts with the send stamp (16 hex digits).
    func sendMessage(thread: Int, threadID: String) {
        let number = nextSend
        nextSend += 1
        let now = monotonicNanos()
        var text = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 {
            let nibble = UInt8(truncatingIfNeeded: (now >> UInt64(60 - 4 * i)) & 0xF)
            text[i] = nibble < 10 ? 48 + nibble : 87 + nibble
        }
        let frame = Array("{\"id\":\"m\(number)\",\"type\":\"message.send\",\"thread_id\":\"\(threadID)\",\"client_message_id\":\"\(index)-\(number)\",\"text\":\"".utf8)
            + text + Self.padding + Array("\"}".utf8)
        pending[number] = PendingSend(sentAt: now, thread: thread, frame: frame)
        runner.noteSent()
        sendFrame(frame)
    }

    /// Sends the first message again, byte for byte (its ack "was lost"): it must be acknowledged with its seq.
    func retryFirstSend() {
        guard let firstSend, pending[0] == nil else { return }
        retrying = true
        pending[0] = PendingSend(sentAt: monotonicNanos(), thread: threads.first ?? 0, frame: firstSend.frame)
        sendFrame(firstSend.frame)
    }

    func sendRead(threadID: String, seq: Int64) {
        sendCommand("{\"id\":\"r\(nextCommandID())\",\"type\":\"thread.read\",\"thread_id\":\"\(threadID)\",\"seq\":\(seq)}")
    }

    func sendThreads() {
        sendCommand("{\"id\":\"t\(nextCommandID())\",\"type\":\"threads\"}")
    }

    /// Sends a command's JSON as it is.
    func sendText(_ text: String) { sendFrame(Array(text.utf8)) }

    private func sendCommand(_ text: String) { sendFrame(Array(text.utf8)) }

    private func sendFrame(_ bytes: [UInt8]) {
        guard let socket, state == .open else { return }
        socket.sendText(bytes)
    }

    // MARK: - Dropping and closing

    /// Forgets the connection (the server or the network ended it).
    private func drop() {
        state = .closed
        resuming = false
        let old = socket
        socket = nil
        old?.close()
    }

    /// The reconnect storm: drop TCP without a close frame, as a phone losing its network would.
    func abortConnection() {
        guard state == .open else { return }
        drop()
    }

    /// Sends close 1000 at the end of a run (the answer is not waited for).
    func sendClose() {
        guard state == .open, let socket else { return }
        socket.sendClose(.normal)
        state = .closed
        socket.shutdownAfterFlush()
    }

    func forceClose() {
        socket?.close()
        socket = nil
    }
}

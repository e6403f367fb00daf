import FoundationEssentials
import Histogram
import LoadSupport

/// The `sessions` scenario: coaches and their clients book video sessions at an open-loop rate of actions —
/// invites, call requests, accepts, counter-proposals, declines, reschedules, the three conflict resolutions,
/// joins and completions — on a few crowded slots each, so that they collide. The generator acts on what the
/// events told it (a stale view makes some actions arrive too late; the server refuses those with a typed code,
/// counted apart from errors). At the end every coach lists its calendar and the run checks:
/// - the invariant: no coach (and so no client, who has one coach) holds two overlapping sessions;
/// - nothing lost: every session the server lists is at the version the coach's socket and the client's socket
///   last got in an event.
/// Measured: command → reply latency, the coach's `join` → `coach_joined` at the client, and the server's CPU
/// per action. Loop thread only.
final class SessionsDriver {
    /// The fields of a session the generator reads (`SessionView` on the wire).
    struct View: Decodable {
        var id: String
        var threadId: String
        var start: Int64
        var durationMinutes: Int64
        var status: String
        var version: Int64
        var proposedBy: String?
        var coachJoined: Bool

        enum CodingKeys: String, CodingKey {
            case id, start, status, version
            case threadId = "thread_id"
            case durationMinutes = "duration_minutes"
            case proposedBy = "proposed_by"
            case coachJoined = "coach_joined"
        }

        var end: Int64 { start + durationMinutes * 60 }
        /// Whether the session takes the participants' time (the no-overlap rule covers these).
        var holdsTime: Bool { ["scheduled", "in_progress", "reschedule_requested"].contains(status) }
        var isOpen: Bool { !["completed", "cancelled", "declined", "expired", "missed"].contains(status) }
    }

    struct Event: Decodable {
        var change: String
        var session: View
    }

    struct Reply<Result: Decodable>: Decodable {
        struct Failure: Decodable { var code: String }
        var ok: Bool
        var result: Result?
        var error: Failure?
    }

    struct Calendar: Decodable {
        var sessions: [View]
    }

    struct Pending {
        var sentAt: UInt64
        var action: String
        var sessionID: String?
    }

    /// Refusals a stale view legitimately earns (the session moved on, the slot was taken meanwhile).
    static let expectedRefusals: Set<String> = [
        "session_action_not_allowed", "session_conflict", "start_in_past", "outside_join_window", "waiting_for_coach",
    ]

    unowned let runner: Runner
    private let coachCount: Int
    /// The newest state of every session, from any event or reply.
    private var known: [String: View] = [:]
    /// The newest version each side's socket got in an event.
    private var coachSaw: [String: Int64] = [:]
    private var clientSaw: [String: Int64] = [:]
    /// Open sessions per coach (socket index), for choosing the next action.
    private var open: [[String]]
    private var pending: [UInt64: Pending] = [:]
    private var nextID: UInt64 = 0
    private var joinSentAt: [String: UInt64] = [:]
    private var random = SystemRandomNumberGenerator()

    private(set) var commandHistogram = Histogram<UInt64>(highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: .three)
    private(set) var joinHistogram = Histogram<UInt64>(highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: .three)
    var measuring = false
    private(set) var sentInWindow: UInt64 = 0
    private(set) var answeredInWindow: UInt64 = 0
    private(set) var refusals: [String: Int] = [:]
    private(set) var actions: [String: Int] = [:]
    private(set) var events: UInt64 = 0
    private(set) var statuses: [String: Int] = [:]

    init(runner: Runner, coaches: Int) {
        self.runner = runner
        coachCount = coaches
        open = Array(repeating: [], count: coaches)
    }

    var outstanding: Int { pending.count }

    // MARK: - Choosing actions

    /// One action by a random coach or one of their clients.
    func act() {
        let c = Int.random(in: 0..<coachCount, using: &random)
        let coach = runner.clients[c]
        guard coach.isLive, !coach.threads.isEmpty else { return }
        open[c].removeAll { known[$0]?.isOpen != true }
        let now = unixNow()
        var choices: [(LoadClient, String, [String: Any])] = []
        for id in open[c] {
            guard let session = known[id], let t = runner.threadIndex[session.threadId] else { continue }
            let client = runner.clients[runner.threads[t].client]
            choices += candidates(session, coach: coach, client: client, now: now)
        }
        if choices.isEmpty || open[c].count < 6 && Int.random(in: 0..<10, using: &random) < 4 {
            return create(coach: coach)
        }
        let (socket, action, fields) = choices[Int.random(in: 0..<choices.count, using: &random)]
        send(socket, "session.act", action: action, fields)
    }

    /// What each side may sensibly do next to `session` (the server's table decides; this only picks).
    private func candidates(_ session: View, coach: LoadClient, client: LoadClient, now: Int64) -> [(LoadClient, String, [String: Any])] {
        let id = session.id
        func on(_ socket: LoadClient, _ action: String, _ extra: [String: Any] = [:]) -> (LoadClient, String, [String: Any]) {
            var fields = extra
            fields["session_id"] = id
            return (socket, action, fields)
        }
        switch session.status {
        case "invited":
            return [on(client, "accept"), on(client, "accept"), on(client, "propose", ["start": slot(now).start]), on(client, "decline")]
        case "requested":
            return [on(coach, "accept"), on(coach, "accept"), on(coach, "propose", ["start": slot(now).start]), on(coach, "decline")]
        case "alternative_proposed":
            return [on(coach, "accept"), on(coach, "accept"), on(coach, "decline")]
        case "needs_resolution":
            return [on(coach, "keep_existing"), on(coach, "ask_reschedule", ["start": slot(now).start]),
                    on(coach, "replace_existing", ["reason": "Load test"])]
        case "reschedule_requested":
            let answerer = session.proposedBy == "coach" ? client : coach
            return [on(answerer, "accept"), on(answerer, "accept"), on(answerer, "decline")]
        case "scheduled":
            if now >= session.start - 600 && now < session.end { return [on(coach, "join")] }
            return [on(coach, "reschedule", ["start": slot(now).start]), on(client, "cancel", ["reason": "Load test"])]
        case "in_progress":
            return session.coachJoined ? [on(coach, "complete"), on(client, "join")] : []
        default:
            return []
        }
    }

    /// A crowded slot: most in two days' 10-hour working day on a half-hour grid, some within the next ten
    /// minutes (joinable at once).
    private func slot(_ now: Int64) -> (start: Int64, minutes: Int) {
        if Int.random(in: 0..<10, using: &random) < 3 {
            let start = (now / 60 + Int64.random(in: 2...9, using: &random)) * 60
            return (start, [15, 30][Int.random(in: 0..<2, using: &random)])
        }
        let day = (now / 86_400 + 2) * 86_400 + 8 * 3600
        return (day + Int64.random(in: 0..<20, using: &random) * 1800, [30, 45, 60][Int.random(in: 0..<3, using: &random)])
    }

    private func create(coach: LoadClient) {
        let t = coach.threads[Int.random(in: 0..<coach.threads.count, using: &random)]
        let (start, minutes) = slot(unixNow())
        let fields: [String: Any] = ["thread_id": runner.threads[t].id, "start": start, "duration_minutes": minutes,
                                     "purpose": "Load test session"]
        if Int.random(in: 0..<5, using: &random) == 0 {
            send(runner.clients[runner.threads[t].client], "session.request", action: "request", fields)
        } else {
            send(coach, "session.invite", action: "invite", fields)
        }
    }

    private func send(_ socket: LoadClient, _ type: String, action: String, _ fields: [String: Any]) {
        guard socket.isLive else { return }
        nextID += 1
        var text = "{\"id\":\"s\(nextID)\",\"type\":\"\(type)\""
        if type == "session.act" { text += ",\"action\":\"\(action)\"" }
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            text += ",\"\(key)\":" + (value is String ? "\"\(value)\"" : "\(value)")
        }
        text += "}"
        let now = monotonicNanos()
        let sessionID = fields["session_id"] as? String
        pending[nextID] = Pending(sentAt: now, action: action, sessionID: sessionID)
        if action == "join", socket.isCoach, let sessionID { joinSentAt[sessionID] = now }
        actions[action, default: 0] += 1
        if measuring { sentInWindow += 1 }
        socket.sendText(text)
    }

    // MARK: - What the server says

    func reply(number: UInt64, frame: UnsafeBufferPointer<UInt8>) {
        guard let sent = pending.removeValue(forKey: number) else { return runner.protocolError("reply to an unknown session command") }
        if sent.sentAt >= runner.windowStart && sent.sentAt < runner.windowEnd {
            answeredInWindow += 1
            commandHistogram.record(min((monotonicNanos() &- sent.sentAt) / 1000, commandHistogram.highestTrackableValue))
        }
        guard let reply = try? JSONDecoder().decode(Reply<View>.self, from: Data(frame)) else {
            return runner.protocolError("session reply not understood")
        }
        if let session = reply.result {
            learn(session)
        } else if let code = reply.error?.code {
            if sent.action == "join", let id = sent.sessionID { joinSentAt[id] = nil }
            if Self.expectedRefusals.contains(code) { refusals[code, default: 0] += 1 } else { runner.commandFailed("\(code) (\(sent.action))") }
        } else {
            runner.protocolError("session reply without result or error")
        }
    }

    func event(by socket: LoadClient, frame: UnsafeBufferPointer<UInt8>) {
        guard let event = try? JSONDecoder().decode(Event.self, from: Data(frame)) else {
            return runner.protocolError("session event not understood")
        }
        events += 1
        let session = event.session
        if socket.isCoach {
            coachSaw[session.id] = max(coachSaw[session.id] ?? 0, session.version)
        } else {
            clientSaw[session.id] = max(clientSaw[session.id] ?? 0, session.version)
            if event.change == "coach_joined", let sentAt = joinSentAt.removeValue(forKey: session.id), measuring {
                joinHistogram.record(min((monotonicNanos() &- sentAt) / 1000, joinHistogram.highestTrackableValue))
            }
        }
        learn(session)
    }

    private func learn(_ session: View) {
        if let old = known[session.id], old.version >= session.version { return }
        if known[session.id] == nil, let t = runner.threadIndex[session.threadId] {
            open[runner.threads[t].coach].append(session.id)
        }
        known[session.id] = session
    }

    // MARK: - The final check

    /// Asks every coach for their calendar and checks it; `done` with the summary.
    func check(done: @escaping (SessionsCheck) -> Void) {
        var check = SessionsCheck()
        var answered = 0
        var finished = false
        let live = (0..<coachCount).filter { runner.clients[$0].isLive }
        let complete = {
            guard !finished else { return }
            finished = true
            check.coachesChecked = answered
            check.coachesAsked = live.count
            done(check)
        }
        listHook = { [unowned self] coach, frame in
            answered += 1
            guard let reply = try? JSONDecoder().decode(Reply<Calendar>.self, from: Data(frame)), let list = reply.result else {
                runner.protocolError("calendar reply not understood")
                return
            }
            examine(list.sessions, coach: coach, into: &check)
            if answered == live.count { complete() }
        }
        let now = unixNow()
        for c in live {
            nextID += 1
            runner.clients[c].sendText("{\"id\":\"c\(nextID)\",\"type\":\"sessions\",\"from\":\(now - 86_400),\"to\":\(now + 4 * 86_400)}")
        }
        if live.isEmpty { complete() }
        runner.after(20) { complete() }
    }

    private var listHook: ((Int, UnsafeBufferPointer<UInt8>) -> Void)?

    func listAnswered(by socket: LoadClient, frame: UnsafeBufferPointer<UInt8>) {
        listHook?(socket.index, frame)
    }

    private func examine(_ sessions: [View], coach: Int, into check: inout SessionsCheck) {
        check.sessionsListed += sessions.count
        for session in sessions {
            statuses[session.status, default: 0] += 1
            if (coachSaw[session.id] ?? 0) < session.version || (clientSaw[session.id] ?? 0) < session.version {
                check.notSeenAtLatestVersion += 1
                if check.examples.count < 5 {
                    check.examples.append("session \(session.id) v\(session.version): coach saw v\(coachSaw[session.id] ?? 0), client v\(clientSaw[session.id] ?? 0)")
                }
            }
        }
        let holding = sessions.filter(\.holdsTime).sorted { $0.start < $1.start }
        check.holdingTime += holding.count
        for (a, b) in zip(holding, holding.dropFirst()) where b.start < a.end {
            check.overlaps += 1
            if check.examples.count < 10 { check.examples.append("coach \(coach): \(a.id) [\(a.start), \(a.end)) overlaps \(b.id) from \(b.start)") }
        }
    }
}

/// What the end-of-run calendar check found.
struct SessionsCheck: Codable {
    var coachesAsked = 0
    var coachesChecked = 0
    var sessionsListed = 0
    var holdingTime = 0
    /// Pairs of a coach's time-holding sessions that overlap (the invariant: 0).
    var overlaps = 0
    /// Sessions whose latest version one of its two participants never got in an event.
    var notSeenAtLatestVersion = 0
    var examples: [String] = []
}

struct SessionsSummary: Codable {
    var coaches: Int
    var clientsPerCoach: Int
    var targetActionsPerSecond: Double
    var windowSeconds: Double
    var sent: UInt64
    var answered: UInt64
    var commandLatencyMicros: LatencySummary
    var coachJoinedLatencyMicros: LatencySummary
    var serverCPUSeconds: Double?
    var serverCPUMicrosPerAction: Double?
    var generatorCPUSeconds: Double
    var actions: [String: Int]
    var refusals: [String: Int]
    var events: UInt64
    var statusesAtEnd: [String: Int]
    var check: SessionsCheck?
}

extension Runner {
    func runSessions() {
        let driver = SessionsDriver(runner: self, coaches: config.coaches)
        sessionsDriver = driver
        connectEveryone { [unowned self] in
            progress("sessions: \(config.coaches) coaches × \(config.clientsPerCoach) clients, \(fixed(config.rate, 0)) actions/s, "
                + "\(fixed(config.warmup, 0)) s warm-up + \(fixed(config.duration, 0)) s measured")
            startActions(rate: config.rate) { driver.act() }
            after(config.warmup) { [unowned self] in
                beginWindow()
                driver.measuring = true
                after(config.duration) { [unowned self] in
                    let window = endWindow()
                    driver.measuring = false
                    stopSending()
                    progress("sessions: window over; waiting for the last replies, then checking every calendar")
                    waitFor(limit: config.grace, { driver.outstanding == 0 }) { [unowned self] in
                        // Events of the last changes follow their replies by a loop turn.
                        after(1) { [unowned self] in
                            driver.check { [unowned self] check in
                                result.sessions = SessionsSummary(
                                    coaches: config.coaches, clientsPerCoach: config.clientsPerCoach,
                                    targetActionsPerSecond: config.rate, windowSeconds: window.seconds, sent: driver.sentInWindow,
                                    answered: driver.answeredInWindow, commandLatencyMicros: LatencySummary(driver.commandHistogram),
                                    coachJoinedLatencyMicros: LatencySummary(driver.joinHistogram),
                                    serverCPUSeconds: window.serverCPUSeconds,
                                    serverCPUMicrosPerAction: window.serverCPUSeconds.flatMap {
                                        driver.answeredInWindow > 0 ? $0 * 1e6 / Double(driver.answeredInWindow) : nil
                                    },
                                    generatorCPUSeconds: window.generatorCPUSeconds, actions: driver.actions,
                                    refusals: driver.refusals, events: driver.events, statusesAtEnd: driver.statuses, check: check)
                                if check.overlaps > 0 { protocolError("sessions overlap (the invariant broke)") }
                                if check.notSeenAtLatestVersion > 0 { protocolError("a session change never reached a participant") }
                                if check.coachesChecked < check.coachesAsked { protocolError("a coach's calendar went unanswered") }
                                closeOut()
                            }
                        }
                    }
                }
            }
        }
    }
}

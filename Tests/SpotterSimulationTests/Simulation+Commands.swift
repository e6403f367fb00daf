import FoundationEssentials
import SpotterCore
import SpotterProtocol

/// The actors: each command is a person's (a coach's or a client's), chosen by the seed among what the apps send —
/// new messages, retries of earlier ones (some with the body changed), receipts, session invites and requests,
/// actions on sessions, changes of the coaching record. Most are valid; some are refused, which must change
/// nothing.
extension Simulation {
    func command() {
        stats.commands += 1
        let user = random.pick(coaches + clients)!
        let roll = random.below(100)
        switch roll {
        case 0..<32: sendNew(user)
        case 32..<40: retry(user, altered: false)
        case 40..<42: retry(user, altered: true)
        case 42..<52: receipt(user)
        case 52..<64: createSession(user)
        case 64..<86: actOnSession(user)
        case 86..<92: changeMessage(user)
        default: changeRecord(user)
        }
    }

    /// One of the user's threads, the writable one most of the time.
    private func thread(of user: String) -> ChatThread? {
        let threads = shell.core.chat.threads(of: user)
        let active = threads.filter(\.active)
        return random.percent(90) ? random.pick(active) ?? random.pick(threads) : random.pick(threads)
    }

    private func isCoach(_ user: String) -> Bool { people[user]?.role == "coach" }

    // MARK: - Messages

    private func sendNew(_ user: String) {
        guard let thread = thread(of: user) else { return note("\(user) has no thread") }
        counter += 1
        let kind: MessageKind = isCoach(user) && random.percent(5) ? .system : .text
        sends.append(SentMessage(sender: user, threadID: thread.id, clientMessageID: "\(user)-\(counter)", body: "m\(counter)",
                                 kind: kind))
        send(sends.count - 1, altered: false)
    }

    private func retry(_ user: String, altered: Bool) {
        let mine = sends.indices.filter { sends[$0].sender == user }.suffix(30)
        guard let index = random.pick(Array(mine)) else { return sendNew(user) }
        send(index, altered: altered)
    }

    private func send(_ index: Int, altered: Bool) {
        let sent = sends[index]
        if altered { counter += 1 }
        let body = altered ? sent.body + " (edited \(counter))" : sent.body
        let request = SendRequest(sender: sent.sender, threadID: sent.threadID, clientMessageID: sent.clientMessageID,
                                  kind: sent.kind, body: body)
        note("\(sent.sender) sends \(sent.clientMessageID) in \(sent.threadID)" + (altered ? " with another body" : ""))
        shell.run(.send(request)) { [self] result in sendReplied(index, altered: altered, result) }
    }

    private struct MessageReply: Decodable {
        let seq: Int64
        let client_message_id: String
    }

    /// A send's acknowledgement names a seq: the message is in the log with it, and every acknowledgement of the
    /// same message names the same one.
    private func sendReplied(_ index: Int, altered: Bool, _ result: Result<SimShell.Ack, APIError>) {
        let sent = sends[index]
        guard case .success(let ack) = result else { return replied(sent.clientMessageID, result) }
        guard let reply = try? JSONDecoder().decode(MessageReply.self, from: Data(ack.json.utf8)),
              reply.client_message_id == sent.clientMessageID else {
            return violation("acked durable", "\(sent.clientMessageID) acknowledged with \(ack.json)")
        }
        replied("\(sent.clientMessageID) seq \(reply.seq)", result)
        // A message edited or deleted since is answered as it now stands (its first body is gone to compare with).
        if altered, ack.records.isEmpty, !changedMessages.contains(sent.clientMessageID) {
            return violation("applied once", "\(sent.clientMessageID) with another body answered as the original (seq \(reply.seq))")
        }
        guard let thread = shell.core.chat.thread(id: sent.threadID),
              log.records.contains(where: { $0.threadNo == thread.no && $0.kind == .message && $0.seq == reply.seq
                  && $0.content.message?.clientMessageID == sent.clientMessageID && $0.side == thread.side(of: sent.sender) }) else {
            return violation("acked durable", "\(sent.clientMessageID) acknowledged as seq \(reply.seq), not in the log")
        }
        guard !altered else { return }
        if let first = sent.ackedSeq, first != reply.seq {
            return violation("applied once", "\(sent.clientMessageID) acknowledged as seq \(first), then as seq \(reply.seq)")
        }
        sends[index].ackedSeq = reply.seq
    }

    /// `message.edit` or `message.delete` of one of the user's acknowledged messages (sometimes a seq that is no
    /// message of theirs: refused, nothing changes). An acknowledged delete's message is a tombstone in the log from
    /// then on (`checkChanges`); an acknowledged edit's text is the message's in the log when it is acknowledged,
    /// unless it was deleted meanwhile.
    private func changeMessage(_ user: String) {
        let mine = sends.indices.filter { sends[$0].sender == user && sends[$0].ackedSeq != nil }.suffix(30)
        let delete = random.percent(60)
        guard let index = random.pick(Array(mine)), let seq = sends[index].ackedSeq else {
            guard let thread = thread(of: user) else { return note("\(user) has no thread") }
            let seq = random.within(0...thread.lastSeq + 1)
            note("\(user) deletes seq \(seq) in \(thread.id), perhaps not theirs")
            return shell.run(.changeMessage(MessageChangeRequest(actorID: user, threadID: thread.id, seq: seq, text: nil))) { [self] result in
                replied("delete by \(user)", result)
            }
        }
        let sent = sends[index]
        counter += 1
        let text = delete ? nil : "edit \(counter)"
        note("\(user) \(delete ? "deletes" : "edits") \(sent.clientMessageID) (seq \(seq)) in \(sent.threadID)")
        changedMessages.insert(sent.clientMessageID)
        shell.run(.changeMessage(MessageChangeRequest(actorID: user, threadID: sent.threadID, seq: seq, text: text))) { [self] result in
            replied("\(delete ? "delete" : "edit") \(sent.clientMessageID)", result)
            guard case .success(let ack) = result, let thread = shell.core.chat.thread(id: sent.threadID) else { return }
            // A later change of the same message, already in the log, decides what it reads now.
            let position = ack.records.first?.pos ?? Int64(log.records.count)
            let overtaken = log.records.dropFirst(Int(position)).contains {
                $0.threadNo == thread.no && $0.content.change?.target == seq
            }
            guard let row = log.records.first(where: { $0.threadNo == thread.no && $0.kind == .message && $0.seq == seq })?.content.message else {
                return violation("changes stick", "\(sent.clientMessageID) changed, no message seq \(seq) in the log")
            }
            if delete {
                deletedMessages.insert(MessageKey(threadNo: thread.no, seq: seq))
                if !row.isDeleted { violation("changes stick", "\(sent.clientMessageID) deleted (acked), not a tombstone in the log") }
            } else if !row.isDeleted, row.body != text, !overtaken {
                violation("changes stick", "\(sent.clientMessageID) edited to \(text ?? "") (acked), the log says \(row.body)")
            }
        }
    }

    private func receipt(_ user: String) {
        guard let thread = thread(of: user) else { return note("\(user) has no thread") }
        let delivered = random.within(0...thread.lastSeq + 1)
        let read: Int64? = random.percent(60) ? random.within(0...delivered) : nil
        note("\(user) receipt in \(thread.id): delivered \(delivered), read \(read.map(String.init) ?? "-")")
        shell.run(.receipt(userID: user, threadID: thread.id, delivered: delivered, read: read)) { [self] result in
            replied("receipt \(user)", result)
        }
    }

    // MARK: - Sessions

    private func createSession(_ user: String) {
        guard let thread = thread(of: user) else { return note("\(user) has no thread") }
        let start = slot()
        // Clients' tiers allow 15 or 25 minutes (`--tiers`); longer ones are refused.
        let minutes = random.percent(60) ? 15 : random.pick([20, 25, 30, 45, 60])!
        let invite = isCoach(user)
        note("\(user) \(invite ? "invites" : "asks for a call") in \(thread.id) at \(start) for \(minutes) min")
        shell.run(.createSession(userID: user, invite: invite, threadID: thread.id, start: start, minutes: minutes,
                                 purpose: "p\(step)")) { [self] result in replied("session by \(user)", result) }
    }

    /// A start among few slots (the next 12 half hours, on the hour or a quarter past), so that sessions meet in
    /// calendars and conflicts arise; sometimes days ahead.
    private func slot() -> Int64 {
        if random.percent(10) { return (now + random.within(86_400...3 * 86_400)) / 900 * 900 }
        return (now / 1_800 + 1 + Int64(random.below(12))) * 1_800 + (random.percent(50) ? 900 : 0)
    }

    private func actOnSession(_ user: String) {
        let theirs = shell.core.sessions.sessions.values.filter { $0.coachID == user || $0.clientID == user }
            .sorted { $0.id < $1.id }
        let actor = { (session: Session) -> SessionActor in session.coachID == user ? .coach : .client }
        let allowed = { (session: Session) in
            SessionMachine.allowed(session.status, by: actor(session), proposedBy: session.proposedBy)
                .filter { ![.confirm, .reject, .expire, .miss].contains($0) }
        }
        // Mostly what the machine allows them (as an app offers), sometimes anything.
        let sensible = random.percent(85)
        let candidates = sensible ? theirs.filter { !allowed($0).isEmpty } : theirs
        guard let session = random.pick(candidates) else { return createSession(user) }
        let options = sensible ? allowed(session) : SessionAction.allCases.filter { ![.confirm, .reject, .expire, .miss].contains($0) }
        // Accepting half the time it is allowed and cancelling seldom, so that sessions get held and meet.
        let action = (options.contains(.accept) && random.percent(50) ? .accept
            : random.pick(options.count > 1 && random.percent(80) ? options.filter { $0 != .cancel } : options)!).rawValue
        let start: Int64? = ["propose", "reschedule", "ask_reschedule"].contains(action) ? slot() : nil
        note("\(user) \(action) \(session.id) (\(session.status.rawValue))" + (start.map { " to \($0)" } ?? ""))
        shell.run(.actOnSession(userID: user, sessionID: session.id, action: action, start: start, reason: "r")) { [self] result in
            replied("\(action) \(session.id)", result)
        }
    }

    // MARK: - The coaching record

    private func changeRecord(_ user: String) {
        let zone = TimeZoneRules.zone(people[user]?.timeZone ?? "UTC")
        let today = LocalDay.of(now, in: zone)
        let change: RecordChange
        let what: String
        if isCoach(user) {
            let checkIns = shell.core.chat.threads(of: user).filter(\.active)
                .flatMap { shell.core.coaching.checkIns(of: $0.clientID) }.sorted { $0.id < $1.id }
            if random.percent(40), let checkIn = random.pick(checkIns) {
                var command = CheckInCommentCommand()
                command.checkInId = checkIn.id
                command.comment = "well done \(step)"
                change = .comment(command)
                what = "comments on \(checkIn.id)"
            } else {
                guard let thread = thread(of: user) else { return note("\(user) has no thread") }
                var command = ChallengeCreateCommand()
                command.threadId = thread.id
                command.name = "challenge \(step)"
                command.startDate = LocalDay.format(LocalDay.of(now, in: TimeZoneRules.zone(people[thread.clientID]?.timeZone ?? "UTC")))
                command.tasks = (1...3).map { ChallengeTaskView(day: $0, name: "task \($0)", description: nil, focus: "training",
                                                               intensity: "light", doneAt: nil) }
                change = .createChallenge(command)
                what = "creates a challenge in \(thread.id)"
            }
        } else {
            let challenges = shell.core.coaching.challenges(of: user, today: today).sorted { $0.id < $1.id }
            let roll = random.below(100)
            if roll < 40, let challenge = random.pick(challenges) {
                var command = ChallengeCheckCommand()
                command.challengeId = challenge.id
                command.day = random.below(3) + 1
                command.done = random.percent(70)
                change = .checkTask(command)
                what = "checks day \(command.day!) of \(challenge.id)"
            } else {
                guard let thread = thread(of: user) else { return note("\(user) has no thread") }
                if roll < 65 {
                    var command = CheckInSubmitCommand()
                    command.threadId = thread.id
                    command.weight = Double(60 + random.below(40))
                    change = .submitCheckIn(command, images: [])
                    what = "checks in"
                } else if roll < 85 {
                    var command = MeasurementAddCommand()
                    command.threadId = thread.id
                    command.method = "navy"
                    command.sex = "male"
                    command.heightCm = 177.8
                    command.neckCm = 38
                    command.waistCm = Double(80 + random.below(15))
                    change = .addMeasurement(command)
                    what = "adds a measurement"
                } else {
                    var command = GoalSetCommand()
                    command.threadId = thread.id
                    command.kind = "cutting"
                    command.targetPercent = Double(9 + random.below(6))
                    command.replace = true  // one active goal: a new one must say it replaces it
                    change = .setGoal(command)
                    what = "sets a goal"
                }
            }
        }
        note("\(user) \(what)")
        shell.run(.record(userID: user, change)) { [self] result in replied("record by \(user)", result) }
    }
}

import FoundationEssentials
import SpotterCore
import SpotterPorts
import SpotterProtocol

/// A coach's availability and the free slots it leaves (issue 30, seed 002 §5 "the scheduler suggests free
/// times"). `availability.set` / `availability.get` are the coach's (a setting, saved whole in the accounts
/// store); `availability.slots` answers the coach and the client of a thread, no one else (`forbidden`). The
/// rules are `CoachAvailability` and `FreeSlots` (SpotterCore/Scheduling); the session commands read the
/// coach's availability before the core decides (`withAvailability`).
extension AppSocket {
    static func registerAvailabilityCommands(_ table: inout CommandTable) {
        table.on(AvailabilitySetCommand.self) { socket, body, id in socket.setAvailability(body, id: id) }
        table.on(AvailabilityGetCommand.self) { socket, _, id in socket.getAvailability(id: id) }
        table.on(AvailabilitySlotsCommand.self) { socket, body, id in socket.freeSlots(body, id: id) }
    }

    private func setAvailability(_ command: AvailabilitySetCommand, id: String) {
        let availability: CoachAvailability
        do throws(APIError) {
            guard actor.role == .coach else { throw APIError(.forbidden, field: "type") }
            availability = try CoachAvailability(command: command)
        } catch {
            return reply(id: id, error: error)
        }
        let accounts = api.services.accounts, coachID = actor.userID, now = api.server.config.clock.now
        let view = availability.view
        api.server.loop.runBlocking({ blockingResult { try accounts.setAvailability(coachID: coachID, view, now: now) } },
                                    then: { [self] result in
            if case .success = result { runner.availabilities[coachID] = availability }
            answer(id: id, result.map { JSONText.encoder.encodeToString(AvailabilityReply(availability: view)) })
        })
    }

    private func getAvailability(id: String) {
        guard actor.role == .coach else { return reply(id: id, error: APIError(.forbidden, field: "type")) }
        let accounts = api.services.accounts, coachID = actor.userID
        api.server.loop.runBlocking({ blockingResult { try accounts.availability(coachID: coachID) } }, then: { [self] result in
            answer(id: id, result.map { view in
                JSONText.encoder.encodeToString(AvailabilityReply(availability: view.flatMap(CoachAvailability.init(view:))?.view))
            })
        })
    }

    private func freeSlots(_ command: AvailabilitySlotsCommand, id: String) {
        let thread: ChatThread, length: Int64, from: Int64, to: Int64, step: Int64, zoneName: String
        do throws(APIError) {
            guard let threadID = command.threadId else { throw APIError(.missingField, field: "thread_id") }
            (thread, _) = try runner.chat.participant(threadID, actor.userID)
            // A link that ended: its former client learns nothing more of the coach's time.
            guard thread.active else { throw APIError(.threadInactive, field: "thread_id") }
            guard let minutes = command.durationMinutes else { throw APIError(.missingField, field: "duration_minutes") }
            guard FreeSlots.lengths.contains(minutes) else { throw APIError(.outOfRange, field: "duration_minutes") }
            guard let start = command.from else { throw APIError(.missingField, field: "from") }
            guard let end = command.to else { throw APIError(.missingField, field: "to") }
            guard end > start else { throw APIError(.badRequest, field: "to") }
            guard end - start <= FreeSlots.maxRangeSeconds else { throw APIError(.outOfRange, field: "to") }
            let stepMinutes = command.stepMinutes ?? FreeSlots.defaultStep
            guard FreeSlots.steps.contains(stepMinutes) else { throw APIError(.outOfRange, field: "step_minutes") }
            if let asked = command.timeZone {
                zoneName = try TimeZoneRules.check(asked, field: "time_zone")
            } else {
                zoneName = TimeZoneRules.shownName(api.services.accounts.directory?.user(id: actor.userID)?.timeZone ?? "UTC")
            }
            (length, from, to, step) = (minutes, start, end, stepMinutes)
        } catch {
            return reply(id: id, error: error)
        }
        let coachID = thread.coachID, clientID = thread.clientID
        withAvailability(coachID: coachID, id: id) { [self] availability in
            guard let availability else {
                return answer(id: id, .success(JSONText.encoder.encodeToString(
                    FreeSlotsView(availabilitySet: false, timeZone: zoneName, coachTimeZone: nil, slots: []))))
            }
            let book = runner.core.sessions
            // Sessions a day either side: a buffer or a slot crossing the range's edge meets them.
            let coachSessions = book.calendar(of: coachID, from: from - 86_400, to: to + 86_400)
            let clientSessions = book.calendar(of: clientID, from: from - 86_400, to: to + 86_400)
                .filter { $0.coachID != coachID }  // the pair's own are among the coach's already
            let found = FreeSlots.compute(availability, busy: coachSessions + clientSessions, coachSessions: coachSessions,
                                          length: length, from: from, to: to, step: step, now: api.server.config.clock.now)
            let zone = TimeZoneRules.zone(zoneName)
            let view = FreeSlotsView(availabilitySet: true, truncated: found.truncated, timeZone: zoneName,
                                     coachTimeZone: availability.timeZone,
                                     slots: found.slots.map { FreeSlotView(start: $0.start, end: $0.end, local: FreeSlots.localText($0.start, zone)) })
            answer(id: id, .success(JSONText.encoder.encodeToString(view)))
        }
    }

    /// Reads the coach's saved availability off the loop, keeps it where the core's context finds it
    /// (`CoreRunner.availabilities`), then goes on with it on the loop. Read each time: in a cluster another
    /// process may have saved it. A failed read is answered `unavailable`.
    func withAvailability(coachID: String, id: String, then next: @escaping (CoachAvailability?) -> Void) {
        let accounts = api.services.accounts
        api.server.loop.runBlocking({ blockingResult { try accounts.availability(coachID: coachID) } }, then: { [self] result in
            switch result {
            case .success(let view):
                let availability = view.flatMap(CoachAvailability.init(view:))
                runner.availabilities[coachID] = availability
                next(availability)
            case .failure:
                reply(id: id, error: APIError(.unavailable, retryAfterSeconds: 1))
            }
        })
    }
}

/// The reply to `availability.set` and `availability.get`: null when the coach saved none.
struct AvailabilityReply: Encodable, Sendable {
    var availability: AvailabilityView?

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(availability, forKey: .availability)
    }

    enum CodingKeys: String, CodingKey { case availability }
}

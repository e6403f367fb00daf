import FoundationEssentials
import SpotterProtocol

/// Group challenges on the socket (seed 003): joining and leaving are changes of the client's record, logged on
/// their current thread like every other; the counts are read from the record, go back in the reply, and go out
/// (not logged) to the coach and every client in the challenge whenever a join, a leave, a finish or an
/// un-finish moves them.
extension CoachingCore {
    /// `challenge.join` and `challenge.leave`: the client's current thread and the body to log.
    mutating func groupChallenge(_ change: RecordChange, by userID: String, _ context: CoreContext) throws(APIError)
        -> (ChatThread, [RecordBody]) {
        let now = context.now
        let today = LocalDay.of(now, in: context.zone(of: userID))
        switch change {
        case .joinChallenge(let command):
            guard context.people(userID)?.role == "client" else { throw APIError(.forbidden, field: "type") }
            guard let thread = currentThread(ofClient: userID) else { throw APIError(.noCoachAssigned) }
            let joining = CoachingBook.Joining(id: context.newID(), clientID: userID, coachID: thread.coachID, command: command,
                                               today: today, now: now)
            return (thread, [try Self.groupRule { () throws(RecordError) in try coaching.joinChallenge(joining) }])
        case .leaveChallenge(let command):
            guard let id = command.challengeId else { throw APIError(.missingField, field: "challenge_id") }
            guard let thread = currentThread(ofClient: userID) else {
                throw coaching.challenges[id]?.clientId == userID ? APIError(.noCoachAssigned) : APIError(.recordNotFound, field: "challenge_id")
            }
            let body = try Self.groupRule { () throws(RecordError) in
                try coaching.leaveChallenge(challengeID: id, clientID: userID, today: today, now: now)
            }
            // Left already (a retry): the challenge as it stands, nothing written.
            return (thread, [body ?? RecordBody(change: "challenge.unchanged",
                                                challenge: coaching.challenges[id].map { CoachingBook.current($0, today: today) })])
        default:
            throw APIError(.badRequest, field: "type")
        }
    }

    /// The counts of a group challenge (nil for a challenge without a template).
    func participation(of challenge: ChallengeView?, _ context: CoreContext) -> ChallengeParticipation? {
        guard let challenge, let template = challenge.templateId else { return nil }
        return coaching.participation(coach: challenge.coachId, template: template,
                                      today: { LocalDay.of(context.now, in: context.zone(of: $0)) })
    }

    /// The `challenge_participants` events a committed record of a group challenge makes when it moves the counts:
    /// to the coach, every client in the challenge, and the client whose change it was.
    func participantEvents(_ record: ChatRecord, _ context: CoreContext) -> [(userID: String, frame: String)] {
        guard case .coaching(let change) = record.content, change.json.contains("\"template_id\""),
              let body = RecordBody(record), let challenge = body.challenge, let template = challenge.templateId else { return [] }
        let moves: Bool
        switch body.change {
        case "challenge.created", "challenge.joined", "challenge.left": moves = true
        case "challenge.task_checked": moves = challenge.done == challenge.days
        case "challenge.task_unchecked": moves = challenge.done == challenge.days - 1 && challenge.leftAt == nil
        default: moves = false
        }
        let today = { (user: String) in LocalDay.of(context.now, in: context.zone(of: user)) }
        guard moves, let counts = coaching.participation(coach: challenge.coachId, template: template, today: today) else { return [] }
        let frame = JSONText.encoder.encodeToString(ChallengeParticipantsEvent(participation: counts))
        var users = [challenge.coachId, challenge.clientId]
        for user in coaching.participantIDs(coach: challenge.coachId, template: template, today: today) where !users.contains(user) {
            users.append(user)
        }
        return users.map { ($0, frame) }
    }

    /// `challenge.groups`: a client's current coach's group challenges (with the client's own open one), or a
    /// coach's own; by name, then template id.
    public func challengeGroups(_ command: ChallengeGroupsCommand, by userID: String, _ context: CoreContext,
                                budget: Int) -> Result<String, APIError> {
        let coachID: String, clientID: String?
        switch context.people(userID)?.role {
        case "coach":
            coachID = userID
            clientID = nil
        case "client":
            guard let thread = currentThread(ofClient: userID) else { return .failure(APIError(.noCoachAssigned)) }
            coachID = thread.coachID
            clientID = userID
        default:
            return .failure(APIError(.forbidden, field: "type"))
        }
        let today = { (user: String) in LocalDay.of(context.now, in: context.zone(of: user)) }
        let groups = coaching.templateIDs(coach: coachID).compactMap { template -> ChallengeGroupView? in
            guard let counts = coaching.participation(coach: coachID, template: template, today: today) else { return nil }
            let mine = clientID.flatMap { coaching.openChallenge(of: $0, coach: coachID, template: template, today: today($0))?.id }
            return ChallengeGroupView(participation: counts, challengeId: mine)
        }
        return .success(ReplyPage.fitting(limit: groups.count, budget: budget) { count in
            JSONText.encoder.encodeToString(ChallengeGroupsResult(groups: Array(groups.prefix(count))))
        })
    }

    private static func groupRule<T>(_ rule: () throws(RecordError) -> T) throws(APIError) -> T {
        do throws(RecordError) {
            return try rule()
        } catch {
            throw APIError(record: error)
        }
    }
}

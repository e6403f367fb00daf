import FoundationEssentials
import SpotterProtocol

/// Group challenges (seed 003): a coach's challenge made with a `template_id` is one any current client of that
/// coach may join; joining copies the template's newest challenge (name, description, tasks) into the client's
/// own record from a start day of theirs. The counts are read from the record itself: a client is a participant
/// while their challenge of the template is pending or active (not left), and has finished it once every task
/// of one of them was checked. A client is in at most one open challenge of a template at a time.
extension CoachingBook {
    /// A group challenge's lengths (seed 003: "7/14/30 days").
    public static let groupChallengeDays: Set<Int> = [7, 14, 30]

    /// The length rule of `challenge.create`: 3–14 days, or 7, 14 or 30 with a template (which the client must
    /// not be in already).
    func checkLength(_ days: Int, template: String?, clientID: String, coachID: String, today: Int64) throws(RecordError) {
        guard let template else {
            guard CoachingBook.challengeDays.contains(days) else { throw .outOfRange("tasks") }
            return
        }
        guard CoachingBook.groupChallengeDays.contains(days) else { throw .challengeLength }
        if openChallenge(of: clientID, coach: coachID, template: template, today: today) != nil { throw .alreadyJoined }
    }

    /// The client's challenge of the template that is pending or active as of `today`.
    public func openChallenge(of clientID: String, coach coachID: String, template: String, today: Int64) -> ChallengeView? {
        for id in (templates[TemplateKey(coachID: coachID, templateID: template)] ?? []).reversed() {
            guard let challenge = challenges[id], challenge.clientId == clientID else { continue }
            let status = CoachingBook.status(challenge, today: today)
            if status == "pending" || status == "active" { return challenge }
        }
        return nil
    }

    /// The group challenge's counts, with each client's `today`; nil when the coach has no such template.
    public func participation(coach coachID: String, template: String, today: (String) -> Int64) -> ChallengeParticipation? {
        let ids = templates[TemplateKey(coachID: coachID, templateID: template)] ?? []
        guard let newest = ids.last.flatMap({ challenges[$0] }) else { return nil }
        var participants = 0
        var finished = Set<String>()
        for id in ids {
            guard let challenge = challenges[id] else { continue }
            switch CoachingBook.status(challenge, today: today(challenge.clientId)) {
            case "pending", "active": participants += 1
            case "completed": finished.insert(challenge.clientId)
            default: break
            }
        }
        return ChallengeParticipation(templateId: template, coachId: coachID, name: newest.name, description: newest.description,
                                      days: newest.days, participants: participants, finished: finished.count)
    }

    /// The clients of the template's challenges that are pending or active (who hear of its counts).
    public func participantIDs(coach coachID: String, template: String, today: (String) -> Int64) -> [String] {
        var seen = Set<String>()
        return (templates[TemplateKey(coachID: coachID, templateID: template)] ?? []).compactMap { id in
            guard let challenge = challenges[id], !seen.contains(challenge.clientId) else { return nil }
            let status = CoachingBook.status(challenge, today: today(challenge.clientId))
            guard status == "pending" || status == "active" else { return nil }
            seen.insert(challenge.clientId)
            return challenge.clientId
        }
    }

    /// The coach's templates, by name then template id.
    public func templateIDs(coach coachID: String) -> [String] {
        templates.keys.filter { $0.coachID == coachID }.map(\.templateID).sorted { a, b in
            let nameA = templates[TemplateKey(coachID: coachID, templateID: a)]?.last.flatMap { challenges[$0]?.name } ?? ""
            let nameB = templates[TemplateKey(coachID: coachID, templateID: b)]?.last.flatMap { challenges[$0]?.name } ?? ""
            return (nameA, a) < (nameB, b)
        }
    }

    /// A client joining a template: the same who, when and id as a challenge made by the coach.
    public typealias Joining = ChallengeRequest<ChallengeJoinCommand>

    /// The client joins their coach's template: a challenge of their own with the newest one's tasks, none done.
    public func joinChallenge(_ joining: Joining) throws(RecordError) -> RecordBody {
        guard let template = joining.command.templateId else { throw .missing("template_id") }
        guard !template.isEmpty, template.count <= 64,
              let newest = templates[TemplateKey(coachID: joining.coachID, templateID: template)]?.last.flatMap({ challenges[$0] })
        else { throw .notFound("template_id") }
        var start = joining.today
        if let text = joining.command.startDate {
            guard let day = LocalDay.parse(text) else { throw .badValue("start_date") }
            guard day >= joining.today, day <= joining.today + 366 else { throw .outOfRange("start_date") }
            start = day
        }
        if openChallenge(of: joining.clientID, coach: joining.coachID, template: template, today: joining.today) != nil {
            throw .alreadyJoined
        }
        let tasks = newest.tasks.map { task in
            ChallengeTaskView(day: task.day ?? 0, name: task.name ?? "", description: task.description, focus: task.focus ?? "",
                              intensity: task.intensity ?? "", doneAt: nil)
        }
        let challenge = ChallengeView(
            id: joining.id, clientId: joining.clientID, coachId: joining.coachID, name: newest.name, description: newest.description,
            startDate: LocalDay.format(start), days: tasks.count, createdBy: newest.createdBy, templateId: template, tasks: tasks,
            done: 0, percent: 0, status: "", createdAt: joining.now)
        return RecordBody(change: "challenge.joined", challenge: CoachingBook.current(challenge, today: joining.today))
    }

    /// The client leaves a challenge of theirs that is pending or active; leaving one they left changes nothing
    /// (nil: a retry is harmless).
    public func leaveChallenge(challengeID: String, clientID: String, today: Int64, now: Int64) throws(RecordError) -> RecordBody? {
        guard let challenge = challenges[challengeID], challenge.clientId == clientID else { throw .notFound("challenge_id") }
        if challenge.leftAt != nil { return nil }
        let status = CoachingBook.status(challenge, today: today)
        guard status == "pending" || status == "active" else { throw .challengeOver }
        var left = challenge
        left.leftAt = now
        return RecordBody(change: "challenge.left", challenge: CoachingBook.current(left, today: today))
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Group challenges (seed 003 "Challenges": 7, 14 or 30 days, with participant counts). A coach's challenge made
// with a `template_id` is a group challenge: any current client of that coach may join it (`challenge.join`),
// which copies its tasks into the client's own record; the client leaves it (`challenge.leave`) or finishes it
// by checking its last task. Everyone sees how many are in it and how many finished, never who.

/// The live counts of one group challenge (a coach's template). `participants`: clients whose challenge of it
/// is pending or active (not left); `finished`: clients who completed it (every task checked) at least once.
public struct ChallengeParticipation: Codable, Sendable, Equatable {
    public var templateId: String
    public var coachId: String
    /// The name, description and length of the newest challenge made from the template.
    public var name: String
    public var description: String?
    public var days: Int
    public var participants: Int
    public var finished: Int
    public init(templateId: String, coachId: String, name: String, description: String?, days: Int, participants: Int,
                finished: Int) {
        self.templateId = templateId
        self.coachId = coachId
        self.name = name
        self.description = description
        self.days = days
        self.participants = participants
        self.finished = finished
    }
    enum CodingKeys: String, CodingKey {
        case name, description, days, participants, finished
        case templateId = "template_id"
        case coachId = "coach_id"
    }
}

/// `challenge_participants` (not logged): a group challenge's counts changed (a client joined, left, finished,
/// or un-finished it). To the coach and to every client in it (and the one whose change it was).
public struct ChallengeParticipantsEvent: Codable, Sendable, Equatable {
    public var type = "challenge_participants"
    public var participation: ChallengeParticipation
    public init(participation: ChallengeParticipation) { self.participation = participation }
}

/// One group challenge as `challenge.groups` lists it: its counts, and (for a client) their own challenge of
/// it that is open (`challenge_id`, absent when they are not in it).
public struct ChallengeGroupView: Codable, Sendable, Equatable {
    public var participation: ChallengeParticipation
    public var challengeId: String?
    public init(participation: ChallengeParticipation, challengeId: String?) {
        self.participation = participation
        self.challengeId = challengeId
    }
    enum CodingKeys: String, CodingKey {
        case participation
        case challengeId = "challenge_id"
    }
}

/// The reply to `challenge.groups`.
public struct ChallengeGroupsResult: Codable, Sendable, Equatable {
    public var groups: [ChallengeGroupView]
    public init(groups: [ChallengeGroupView]) { self.groups = groups }
}

/// `challenge.join` (a client): join the group challenge `template_id` of their current coach, from
/// `start_date` (`YYYY-MM-DD` in the client's zone, today or later; default today).
public struct ChallengeJoinCommand: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    public var templateId: String?
    public var startDate: String?
    enum CodingKeys: String, CodingKey, CaseIterable {
        case templateId = "template_id"
        case startDate = "start_date"
    }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// `challenge.leave` (the client): leave a challenge of theirs that is pending or active.
public struct ChallengeLeaveCommand: Codable, Sendable, Equatable, KnownFields {
    public init() {}
    public var challengeId: String?
    enum CodingKeys: String, CodingKey, CaseIterable { case challengeId = "challenge_id" }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// `challenge.groups` (a client: their current coach's group challenges; a coach: their own), by name.
public struct ChallengeGroupsCommand: Decodable, Sendable, Equatable, KnownFields {
    public static let fieldNames: Set<String> = []
    public init() {}
    public init(from decoder: any Decoder) throws {}
}

/// A challenge type (a challenge's main focus: the focus most of its tasks have, ties to the first of
/// `training`, `nutrition`, `recovery`, `consistency`) and how many challenges of it ran in a range.
public struct ChallengeTypeCount: Codable, Sendable, Equatable {
    public var type: String
    public var challenges: Int
    public init(type: String, challenges: Int) {
        self.type = type
        self.challenges = challenges
    }
}

extension ChallengeJoinCommand: SocketCommandBody { public static let type = "challenge.join" }
extension ChallengeLeaveCommand: SocketCommandBody { public static let type = "challenge.leave" }
extension ChallengeGroupsCommand: SocketCommandBody { public static let type = "challenge.groups" }

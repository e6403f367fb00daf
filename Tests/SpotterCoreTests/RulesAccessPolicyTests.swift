import Testing
@testable import SpotterCore

/// Who is asking, relative to a client "owner" whose linked coach is "coach-1".
enum Relationship: String, CaseIterable, Sendable {
    case owner, linkedCoach, otherCoach, admin, otherClient
}

@Suite("AccessPolicy")
struct RulesAccessPolicyTests {
    static let ownerID = "client-1"
    static let coachID = "coach-1"

    static func actor(_ relationship: Relationship) -> Actor {
        switch relationship {
        case .owner: return Actor(userID: ownerID, role: .client)
        case .linkedCoach: return Actor(userID: coachID, role: .coach)
        case .otherCoach: return Actor(userID: "coach-2", role: .coach)
        case .admin: return Actor(userID: "admin-1", role: .admin)
        case .otherClient: return Actor(userID: "client-2", role: .client)
        }
    }

    @Test("client data: owner, linked coach and admin only", arguments: [
        (Relationship.owner, true), (.linkedCoach, true), (.otherCoach, false), (.admin, true), (.otherClient, false),
    ])
    func clientData(_ relationship: Relationship, _ expected: Bool) {
        let result = AccessPolicy.canAccessClientData(Self.actor(relationship), ownerID: Self.ownerID,
                                                      ownerCoachID: Self.coachID)
        #expect(result == expected, "\(relationship)")
    }

    @Test("client data of a client without a coach: no coach gets in", arguments: [
        (Relationship.owner, true), (.linkedCoach, false), (.otherCoach, false), (.admin, true), (.otherClient, false),
    ])
    func clientDataWithoutCoach(_ relationship: Relationship, _ expected: Bool) {
        let result = AccessPolicy.canAccessClientData(Self.actor(relationship), ownerID: Self.ownerID, ownerCoachID: nil)
        #expect(result == expected, "\(relationship)")
    }

    @Test("a client's avatar: as their data", arguments: [
        (Relationship.owner, true), (.linkedCoach, true), (.otherCoach, false), (.admin, true), (.otherClient, false),
    ])
    func clientAvatar(_ relationship: Relationship, _ expected: Bool) {
        let result = AccessPolicy.canSeeAvatar(Self.actor(relationship), ownerID: Self.ownerID, ownerRole: .client,
                                               ownerCoachID: Self.coachID)
        #expect(result == expected, "\(relationship)")
    }

    @Test("a coach's avatar: anyone signed in", arguments: Relationship.allCases)
    func coachAvatar(_ relationship: Relationship) {
        #expect(AccessPolicy.canSeeAvatar(Self.actor(relationship), ownerID: "coach-9", ownerRole: .coach, ownerCoachID: nil))
        #expect(!AccessPolicy.canSeeAvatar(Actor(userID: "", role: .client), ownerID: "coach-9", ownerRole: .coach, ownerCoachID: nil))
    }

    @Test("a client whose id equals the owner's coach id is still not a coach")
    func roleMatters() {
        let impostor = Actor(userID: Self.coachID, role: .client)
        #expect(!AccessPolicy.canAccessClientData(impostor, ownerID: Self.ownerID, ownerCoachID: Self.coachID))
    }

    @Test("empty ids never match")
    func emptyIDs() {
        let nobody = Actor(userID: "", role: .coach)
        #expect(!AccessPolicy.canAccessClientData(nobody, ownerID: "", ownerCoachID: ""))
        #expect(!AccessPolicy.canAccessClientData(Actor(userID: "", role: .admin), ownerID: "x", ownerCoachID: nil))
        #expect(!AccessPolicy.canListOwnClients(nobody))
        #expect(!AccessPolicy.canActAsClient(Actor(userID: "", role: .client)))
        #expect(!AccessPolicy.canAdminister(Actor(userID: "", role: .admin)))
    }

    @Test("role-only permissions, for every relationship", arguments: Relationship.allCases)
    func rolePermissions(_ relationship: Relationship) {
        let actor = Self.actor(relationship)
        let isClient = relationship == .owner || relationship == .otherClient
        let isCoach = relationship == .linkedCoach || relationship == .otherCoach
        #expect(AccessPolicy.canActAsClient(actor) == isClient)
        #expect(AccessPolicy.canListOwnClients(actor) == isCoach)
        #expect(AccessPolicy.canAdminister(actor) == (relationship == .admin))
    }

    @Test("exactly one role-only permission per role", arguments: Role.allCases)
    func onePermissionPerRole(_ role: Role) {
        let actor = Actor(userID: "u", role: role)
        let granted = [AccessPolicy.canActAsClient(actor), AccessPolicy.canListOwnClients(actor),
                       AccessPolicy.canAdminister(actor)].filter { $0 }.count
        #expect(granted == 1)
    }

    @Test("role wire spellings")
    func roleSpellings() {
        #expect(Role.allCases.map(\.rawValue) == ["client", "coach", "admin"])
        #expect(Role(rawValue: "Admin") == nil)
    }
}

import Testing
@testable import SpotterStore

/// Coaches, links, threads and change requests against an in-memory store.
@Suite("AccountStore: coaches, links and change requests")
struct AccountCoachingTests {
    let accounts: AccountStore
    let store: Store

    init() throws {
        store = try Store.inMemory()
        accounts = AccountStore(store)
        for (id, name) in [("k1", "Khalid"), ("k2", "Amal"), ("k3", "Zaid")] {
            try accounts.createUser(id: id, role: "coach", fullName: name, email: "\(id)@example.com", phone: nil,
                                    passwordHash: nil, now: 0)
        }
        for (id, name) in [("c1", "Mona"), ("c2", "Fahad"), ("c3", "Lina")] {
            try accounts.createUser(id: id, role: "client", fullName: name, email: "\(id)@example.com", phone: nil,
                                    passwordHash: nil, now: 0)
        }
        try accounts.createUser(id: "admin", role: "admin", fullName: "Admin", email: "admin@example.com", phone: nil,
                                passwordHash: nil, now: 0)
    }

    private func threadCount() throws -> Int {
        try store.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM thread") ?? -1 }
    }

    @Test("listCoaches is ordered by name with client counts")
    func listCoaches() throws {
        try accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 1)
        try accounts.createLink(clientID: "c2", coachID: "k1", threadID: "t2", now: 1)
        try accounts.createLink(clientID: "c3", coachID: "k3", threadID: "t3", now: 1)
        let coaches = try accounts.listCoaches()
        #expect(coaches.map(\.id) == ["k2", "k1", "k3"])
        #expect(coaches.map(\.fullName) == ["Amal", "Khalid", "Zaid"])
        #expect(coaches.map(\.clientCount) == [0, 2, 1])
    }

    @Test("createLink creates the link and its thread; a second link conflicts")
    func createLink() throws {
        #expect(try accounts.link(clientID: "c1") == nil)
        let link = try accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 5)
        #expect(link == LinkRecord(clientId: "c1", coachId: "k1", threadId: "t1", createdAt: 5))
        #expect(try accounts.link(clientID: "c1") == link)
        #expect(try threadCount() == 1)
        #expect(throws: AccountStoreError.conflict("already_linked")) {
            try accounts.createLink(clientID: "c1", coachID: "k2", threadID: "t9", now: 6)
        }
        #expect(try accounts.link(clientID: "c1")?.coachId == "k1")
        #expect(try threadCount() == 1)
    }

    @Test("linking to a non-coach or an unknown coach is notFound")
    func linkToNonCoach() throws {
        #expect(throws: AccountStoreError.notFound) {
            try accounts.createLink(clientID: "c1", coachID: "c2", threadID: "t1", now: 1)
        }
        #expect(throws: AccountStoreError.notFound) {
            try accounts.createLink(clientID: "c1", coachID: "ghost", threadID: "t1", now: 1)
        }
        #expect(try accounts.link(clientID: "c1") == nil)
        #expect(try threadCount() == 0)
    }

    @Test("clients(ofCoach:) lists the coach's clients with their latest weight")
    func clientsOfCoach() throws {
        try accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 1)
        try accounts.createLink(clientID: "c2", coachID: "k1", threadID: "t2", now: 1)
        try accounts.createLink(clientID: "c3", coachID: "k2", threadID: "t3", now: 1)
        var profile = ClientProfileRecord(userId: "c1", dateOfBirth: "1995-01-02", gender: "female", heightCm: 160,
                                          weightKg: 80, goal: "Lose weight", experienceLevel: "beginner",
                                          dietaryRestrictions: [], medicalConditions: [], updatedAt: 10)
        try accounts.saveOnboarding(profile, now: 10)
        profile.weightKg = 77.5
        try accounts.saveOnboarding(profile, now: 20)
        let listed = try accounts.clients(ofCoach: "k1")
        #expect(listed == [
            ClientListing(clientId: "c2", fullName: "Fahad", goal: nil, experienceLevel: nil, dateOfBirth: nil,
                          latestWeightKg: nil, threadId: "t2"),
            ClientListing(clientId: "c1", fullName: "Mona", goal: "Lose weight", experienceLevel: "beginner",
                          dateOfBirth: "1995-01-02", latestWeightKg: 77.5, threadId: "t1"),
        ])
        #expect(try accounts.clients(ofCoach: "k2").map(\.clientId) == ["c3"])
        #expect(try accounts.clients(ofCoach: "k3").isEmpty)
    }

    @Test("change requests: no coach, pending twice, unknown coach, same coach")
    func changeRequestRefusals() throws {
        #expect(throws: AccountStoreError.conflict("no_coach")) {
            try accounts.createChangeRequest(id: "r0", clientID: "c1", toCoachID: "k2", reason: nil, now: 1)
        }
        try accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 1)
        #expect(throws: AccountStoreError.conflict("same_coach")) {
            try accounts.createChangeRequest(id: "r0", clientID: "c1", toCoachID: "k1", reason: nil, now: 2)
        }
        #expect(throws: AccountStoreError.notFound) {
            try accounts.createChangeRequest(id: "r0", clientID: "c1", toCoachID: "c2", reason: nil, now: 2)
        }
        let request = try accounts.createChangeRequest(id: "r1", clientID: "c1", toCoachID: "k2", reason: "schedule", now: 3)
        #expect(request == ChangeRequestRecord(id: "r1", clientId: "c1", fromCoachId: "k1", toCoachId: "k2",
                                               reason: "schedule", status: "pending", createdAt: 3, decidedAt: nil,
                                               decidedBy: nil))
        #expect(throws: AccountStoreError.conflict("pending")) {
            try accounts.createChangeRequest(id: "r2", clientID: "c1", toCoachID: "k3", reason: nil, now: 4)
        }
        #expect(try accounts.changeRequests(status: nil).map(\.id) == ["r1"])
    }

    @Test("approving moves the link and creates the new thread; deciding twice conflicts")
    func approve() throws {
        try accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 1)
        try accounts.createChangeRequest(id: "r1", clientID: "c1", toCoachID: "k2", reason: nil, now: 2)
        let decided = try accounts.decideChangeRequest(id: "r1", approve: true, adminID: "admin", threadID: "t2", now: 3)
        #expect(decided.status == "approved" && decided.decidedAt == 3 && decided.decidedBy == "admin")
        #expect(try accounts.link(clientID: "c1") == LinkRecord(clientId: "c1", coachId: "k2", threadId: "t2", createdAt: 3))
        #expect(try threadCount() == 2)   // the old thread is kept
        #expect(try accounts.clients(ofCoach: "k1").isEmpty)
        #expect(try accounts.clients(ofCoach: "k2").map(\.clientId) == ["c1"])
        #expect(throws: AccountStoreError.conflict("not_pending")) {
            try accounts.decideChangeRequest(id: "r1", approve: false, adminID: "admin", threadID: "t9", now: 4)
        }
        #expect(throws: AccountStoreError.notFound) {
            try accounts.decideChangeRequest(id: "nope", approve: true, adminID: "admin", threadID: "t9", now: 4)
        }
        // Moving back to the first coach reuses the pair's existing thread.
        try accounts.createChangeRequest(id: "r2", clientID: "c1", toCoachID: "k1", reason: nil, now: 5)
        try accounts.decideChangeRequest(id: "r2", approve: true, adminID: "admin", threadID: "t-new", now: 6)
        #expect(try accounts.link(clientID: "c1")?.threadId == "t1")
        #expect(try threadCount() == 2)
    }

    @Test("rejecting keeps the link; requests list newest first and by status")
    func reject() throws {
        try accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 1)
        try accounts.createLink(clientID: "c2", coachID: "k1", threadID: "t2", now: 1)
        try accounts.createChangeRequest(id: "r1", clientID: "c1", toCoachID: "k2", reason: nil, now: 2)
        let rejected = try accounts.decideChangeRequest(id: "r1", approve: false, adminID: "admin", threadID: "tx", now: 3)
        #expect(rejected.status == "rejected")
        #expect(try accounts.link(clientID: "c1")?.coachId == "k1")
        #expect(try threadCount() == 2)
        try accounts.createChangeRequest(id: "r2", clientID: "c1", toCoachID: "k3", reason: nil, now: 4)
        try accounts.createChangeRequest(id: "r3", clientID: "c2", toCoachID: "k2", reason: nil, now: 5)
        #expect(try accounts.changeRequests(status: nil).map(\.id) == ["r3", "r2", "r1"])
        #expect(try accounts.changeRequests(status: "pending").map(\.id) == ["r3", "r2"])
        #expect(try accounts.changeRequests(status: "rejected").map(\.id) == ["r1"])
        #expect(try accounts.changeRequests(status: "approved").isEmpty)
    }
}

import Testing
@testable import SpotterPorts
import SpotterProtocol

/// Coaches, links, threads and change requests, on every engine of the accounts.
@Suite("AccountStore: coaches, links and change requests")
struct AccountCoachingTests {
    /// The people every test starts with.
    static func people(_ accounts: AccountStore) throws {
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

    private func threadCount(_ f: AccountsFixture) throws -> Int {
        let counts: [Int] = try f.column("SELECT COUNT(*) FROM thread")
        return counts.first ?? -1
    }

    @Test("listCoaches is ordered by name with client counts", arguments: AccountsBackend.allCases)
    func listCoaches(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try Self.people(f.accounts)
        try f.accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 1)
        try f.accounts.createLink(clientID: "c2", coachID: "k1", threadID: "t2", now: 1)
        try f.accounts.createLink(clientID: "c3", coachID: "k3", threadID: "t3", now: 1)
        let coaches = try f.accounts.listCoaches()
        #expect(coaches.map(\.id) == ["k2", "k1", "k3"])
        #expect(coaches.map(\.fullName) == ["Amal", "Khalid", "Zaid"])
        #expect(coaches.map(\.clientCount) == [0, 2, 1])
    }

    @Test("createLink creates the link and its thread; a second link conflicts", arguments: AccountsBackend.allCases)
    func createLink(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try Self.people(f.accounts)
        #expect(try f.accounts.link(clientID: "c1") == nil)
        let link = try f.accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 5)
        #expect(link == LinkView(clientId: "c1", coachId: "k1", threadId: "t1"))
        #expect(try f.accounts.link(clientID: "c1") == link)
        #expect(try threadCount(f) == 1)
        #expect(throws: AccountStoreError.conflict("already_linked")) {
            try f.accounts.createLink(clientID: "c1", coachID: "k2", threadID: "t9", now: 6)
        }
        #expect(try f.accounts.link(clientID: "c1")?.coachId == "k1")
        #expect(try threadCount(f) == 1)
    }

    @Test("linking to a non-coach or an unknown coach is notFound", arguments: AccountsBackend.allCases)
    func linkToNonCoach(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try Self.people(f.accounts)
        #expect(throws: AccountStoreError.notFound) {
            try f.accounts.createLink(clientID: "c1", coachID: "c2", threadID: "t1", now: 1)
        }
        #expect(throws: AccountStoreError.notFound) {
            try f.accounts.createLink(clientID: "c1", coachID: "ghost", threadID: "t1", now: 1)
        }
        #expect(try f.accounts.link(clientID: "c1") == nil)
        #expect(try threadCount(f) == 0)
    }

    @Test("clients(ofCoach:) lists the coach's clients with their latest weight", arguments: AccountsBackend.allCases)
    func clientsOfCoach(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try Self.people(f.accounts)
        try f.accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 1)
        try f.accounts.createLink(clientID: "c2", coachID: "k1", threadID: "t2", now: 1)
        try f.accounts.createLink(clientID: "c3", coachID: "k2", threadID: "t3", now: 1)
        var profile = ClientProfileView(clientId: "c1", dateOfBirth: "1995-01-02", age: nil, gender: "female", heightCm: 160,
                                        weightKg: 80, goal: "Lose weight", experienceLevel: "beginner",
                                        dietaryRestrictions: [], medicalConditions: [])
        try f.accounts.saveOnboarding(profile, now: 10)
        profile.weightKg = 77.5
        try f.accounts.saveOnboarding(profile, now: 20)
        let listed = try f.accounts.clients(ofCoach: "k1")
        #expect(listed == [
            ClientListing(clientId: "c2", fullName: "Fahad", goal: nil, experienceLevel: nil, dateOfBirth: nil,
                          latestWeightKg: nil, threadId: "t2"),
            ClientListing(clientId: "c1", fullName: "Mona", goal: "Lose weight", experienceLevel: "beginner",
                          dateOfBirth: "1995-01-02", latestWeightKg: 77.5, threadId: "t1"),
        ])
        #expect(try f.accounts.clients(ofCoach: "k2").map(\.clientId) == ["c3"])
        #expect(try f.accounts.clients(ofCoach: "k3").isEmpty)
    }

    @Test("change requests: no coach, pending twice, unknown coach, same coach", arguments: AccountsBackend.allCases)
    func changeRequestRefusals(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try Self.people(f.accounts)
        #expect(throws: AccountStoreError.conflict("no_coach")) {
            try f.accounts.createChangeRequest(id: "r0", clientID: "c1", toCoachID: "k2", reason: nil, now: 1)
        }
        try f.accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 1)
        #expect(throws: AccountStoreError.conflict("same_coach")) {
            try f.accounts.createChangeRequest(id: "r0", clientID: "c1", toCoachID: "k1", reason: nil, now: 2)
        }
        #expect(throws: AccountStoreError.notFound) {
            try f.accounts.createChangeRequest(id: "r0", clientID: "c1", toCoachID: "c2", reason: nil, now: 2)
        }
        let request = try f.accounts.createChangeRequest(id: "r1", clientID: "c1", toCoachID: "k2", reason: "schedule", now: 3)
        #expect(request == ChangeRequestView(id: "r1", clientId: "c1", fromCoachId: "k1", toCoachId: "k2",
                                             reason: "schedule", status: "pending", createdAt: 3, decidedAt: nil))
        #expect(throws: AccountStoreError.conflict("pending")) {
            try f.accounts.createChangeRequest(id: "r2", clientID: "c1", toCoachID: "k3", reason: nil, now: 4)
        }
        #expect(try f.accounts.changeRequests(status: nil).map(\.id) == ["r1"])
    }

    @Test("approving moves the link and creates the new thread; deciding twice conflicts", arguments: AccountsBackend.allCases)
    func approve(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try Self.people(f.accounts)
        try f.accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 1)
        try f.accounts.createChangeRequest(id: "r1", clientID: "c1", toCoachID: "k2", reason: nil, now: 2)
        let decided = try f.accounts.decideChangeRequest(id: "r1", approve: true, adminID: "admin", threadID: "t2", now: 3)
        #expect(decided.status == "approved" && decided.decidedAt == 3)
        #expect(try f.column("SELECT decidedBy FROM coachChangeRequest WHERE id = 'r1'") == ["admin"])
        #expect(try f.accounts.link(clientID: "c1") == LinkView(clientId: "c1", coachId: "k2", threadId: "t2"))
        #expect(try threadCount(f) == 2)   // the old thread is kept
        #expect(try f.accounts.clients(ofCoach: "k1").isEmpty)
        #expect(try f.accounts.clients(ofCoach: "k2").map(\.clientId) == ["c1"])
        #expect(throws: AccountStoreError.conflict("not_pending")) {
            try f.accounts.decideChangeRequest(id: "r1", approve: false, adminID: "admin", threadID: "t9", now: 4)
        }
        #expect(throws: AccountStoreError.notFound) {
            try f.accounts.decideChangeRequest(id: "nope", approve: true, adminID: "admin", threadID: "t9", now: 4)
        }
        // Moving back to the first coach reuses the pair's existing thread.
        try f.accounts.createChangeRequest(id: "r2", clientID: "c1", toCoachID: "k1", reason: nil, now: 5)
        try f.accounts.decideChangeRequest(id: "r2", approve: true, adminID: "admin", threadID: "t-new", now: 6)
        #expect(try f.accounts.link(clientID: "c1")?.threadId == "t1")
        #expect(try threadCount(f) == 2)
    }

    @Test("rejecting keeps the link; requests list newest first and by status", arguments: AccountsBackend.allCases)
    func reject(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try Self.people(f.accounts)
        try f.accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 1)
        try f.accounts.createLink(clientID: "c2", coachID: "k1", threadID: "t2", now: 1)
        try f.accounts.createChangeRequest(id: "r1", clientID: "c1", toCoachID: "k2", reason: nil, now: 2)
        let rejected = try f.accounts.decideChangeRequest(id: "r1", approve: false, adminID: "admin", threadID: "tx", now: 3)
        #expect(rejected.status == "rejected")
        #expect(try f.accounts.link(clientID: "c1")?.coachId == "k1")
        #expect(try threadCount(f) == 2)
        try f.accounts.createChangeRequest(id: "r2", clientID: "c1", toCoachID: "k3", reason: nil, now: 4)
        try f.accounts.createChangeRequest(id: "r3", clientID: "c2", toCoachID: "k2", reason: nil, now: 5)
        #expect(try f.accounts.changeRequests(status: nil).map(\.id) == ["r3", "r2", "r1"])
        #expect(try f.accounts.changeRequests(status: "pending").map(\.id) == ["r3", "r2"])
        #expect(try f.accounts.changeRequests(status: "rejected").map(\.id) == ["r1"])
        #expect(try f.accounts.changeRequests(status: "approved").isEmpty)
    }
}

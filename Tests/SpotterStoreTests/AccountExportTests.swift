import Testing
import SpotterCore
import SpotterProtocol
@testable import SpotterPorts
@testable import SpotterStore

/// The export's reads (`AccountStore+Export`) on every engine: only the user's rows, in order, and no secret
/// (PostgreSQL hands every value over as text and folds unquoted names: the typed reads must come out the same).
@Suite("AccountStore: what an export reads")
struct AccountExportTests {
    @Test("sign-ins, weights, ratings both ways, change requests, attachments, last seen", arguments: AccountsBackend.allCases)
    func exportReads(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        for (id, role) in [("a", "client"), ("b", "client"), ("x", "coach"), ("y", "coach")] {
            try accounts.createUser(id: id, role: role, fullName: id.uppercased(), email: "\(id)@x.test", phone: nil, passwordHash: "$scrypt$secret",
                                    now: 1)
        }
        // Two sessions of a, one refreshed and then signed out; one of b.
        try accounts.storeRefreshToken(hash: "t1", userID: "a", familyID: "fa", now: 10, expiresAt: 1_000)
        _ = try accounts.rotateRefreshToken(oldHash: "t1", newHash: "t2", now: 20, newExpiresAt: 2_000)
        _ = try accounts.revokeFamily(ofTokenHash: "t2", now: 30)
        try accounts.storeRefreshToken(hash: "t3", userID: "a", familyID: "fb", now: 40, expiresAt: 3_000)
        try accounts.storeRefreshToken(hash: "t4", userID: "b", familyID: "fc", now: 50, expiresAt: 3_000)
        #expect(try accounts.signInSessions(userID: "a") == [
            .init(id: "fa", startedAt: 10, lastRefreshedAt: 20, expiresAt: 2_000, revokedAt: 30),
            .init(id: "fb", startedAt: 40, lastRefreshedAt: 40, expiresAt: 3_000, revokedAt: nil),
        ])

        let profile = ClientProfileView(clientId: "a", dateOfBirth: "1995-01-02", age: nil, gender: "female", heightCm: 160,
                                        weightKg: 61.5, goal: "Run", experienceLevel: "beginner", dietaryRestrictions: [],
                                        medicalConditions: ["asthma"])
        try accounts.saveOnboarding(profile, now: 100)
        #expect(try accounts.weightEntries(clientID: "a") == [.init(weightKg: 61.5, recordedAt: 100)])
        #expect(try accounts.weightEntries(clientID: "b").isEmpty)

        // a rates x twice (once skipped); b rates x; a's export has a's two, x's has all three.
        try accounts.addRating(RatingRecord(coachId: "x", clientId: "a", stars: 5, feedback: "great", sessionId: "s1", createdAt: 200))
        try accounts.addRating(RatingRecord(coachId: "x", clientId: "a", stars: nil, feedback: nil, sessionId: nil, createdAt: 200))
        try accounts.addRating(RatingRecord(coachId: "x", clientId: "b", stars: 2, feedback: nil, sessionId: nil, createdAt: 150))
        #expect(try accounts.ratings(involving: "a").map(\.stars) == [5, nil])
        #expect(try accounts.ratings(involving: "x").map(\.clientId) == ["b", "a", "a"])
        #expect(try accounts.ratings(involving: "y").isEmpty)

        try accounts.createLink(clientID: "a", coachID: "x", threadID: "t-ax", now: 300)
        _ = try accounts.createChangeRequest(id: "r1", clientID: "a", toCoachID: "y", reason: "schedule", now: 310)
        #expect(try accounts.changeRequests(ofClient: "a").map { [$0.id, $0.toCoachId, $0.reason ?? "", $0.status] } == [["r1", "y", "schedule", "pending"]])
        #expect(try accounts.changeRequests(ofClient: "b").isEmpty)

        try f.accounts.engine.write({ db in
            for (id, thread, at) in [("f2", "t-ax", 400), ("f1", "t-ax", 400), ("f3", "t-other", 390)] {
                try db.execute("INSERT INTO attachment (id, threadId, uploaderId, type, bytes, createdAt) VALUES (?, ?, ?, ?, ?, ?)",
                               [id, thread, "a", "image/png", 12, at])
            }
        }, afterCommit: { _ in })
        #expect(try accounts.attachments(threadID: "t-ax").map(\.id) == ["f1", "f2"])
        #expect(try accounts.attachments(threadID: "t-ax").first == .init(id: "f1", threadID: "t-ax", uploaderID: "a", type: "image/png",
                                                                          bytes: 12, createdAt: 400))
        #expect(try accounts.lastSeenAt(userID: "a") == nil)
    }
}

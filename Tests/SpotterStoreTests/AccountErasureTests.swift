import Testing
@testable import SpotterPorts
import SpotterProtocol
@testable import SpotterStore

/// `AccountStore.erase` on every engine: what goes, what stays as a tombstone, the coach's refusal.
@Suite("AccountStore: erasing an account")
struct AccountErasureTests {
    @Test("a coach with clients is refused with the count; a client's erasure wipes the profile and keeps a tombstone",
          arguments: AccountsBackend.allCases)
    func erase(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        try accounts.createUser(id: "k1", role: "coach", fullName: "Khalid", email: "k@example.com", phone: nil,
                                passwordHash: "$scrypt$k", now: 1)
        try accounts.createUser(id: "c1", role: "client", fullName: "Sara", email: "sara@example.com", phone: "+966500000001",
                                passwordHash: "$scrypt$c", now: 2)
        try accounts.createUser(id: "c2", role: "client", fullName: "Lina", email: "lina@example.com", phone: nil,
                                passwordHash: nil, now: 3)
        try accounts.createLink(clientID: "c1", coachID: "k1", threadID: "t1", now: 4)
        try accounts.createLink(clientID: "c2", coachID: "k1", threadID: "t2", now: 4)
        try accounts.saveOnboarding(ClientProfileView(
            clientId: "c1", dateOfBirth: "1995-01-02", age: nil, gender: "female", heightCm: 160, weightKg: 80, goal: "Lose weight",
            experienceLevel: "beginner", dietaryRestrictions: [], medicalConditions: ["asthma"]), now: 5)
        try accounts.addRating(RatingRecord(coachId: "k1", clientId: "c1", stars: 4, feedback: "kind words", sessionId: nil, createdAt: 6))
        try accounts.storeRefreshToken(hash: "h1", userID: "c1", familyID: "f1", now: 7, expiresAt: 1_000)
        try accounts.storeRefreshToken(hash: "h2", userID: "c1", familyID: "f2", now: 7, expiresAt: 1_000)
        try accounts.revokeFamily(ofTokenHash: "h2", now: 8)
        try accounts.saveOTPChallenge(phone: "+966500000001", codeDigest: "d", issuedAt: 9, failedAttempts: 0)

        #expect(throws: AccountStoreError.coachHasClients(count: 2)) { try accounts.erase(userID: "k1", now: 10) }
        #expect(try accounts.user(id: "k1")?.erasedAt == nil)
        #expect(throws: AccountStoreError.notFound) { try accounts.erase(userID: "nobody", now: 10) }

        let erased = try accounts.erase(userID: "c1", now: 20)
        #expect(erased.endedThreads == ["t1"] && erased.role == "client" && erased.erasedAt == 20)
        #expect(Set(erased.revoked.map(\.familyID)) == ["f1", "f2"])
        let tombstone = try #require(try accounts.user(id: "c1"))
        #expect(tombstone == UserRecord(id: "c1", role: "client", fullName: nil, email: nil, phone: nil, passwordHash: nil,
                                        language: "en", onboardingCompleted: false, createdAt: 2, erasedAt: 20))
        #expect(try accounts.link(clientID: "c1") == nil)
        #expect(try accounts.clientProfile(userID: "c1") == nil)
        #expect(try accounts.otpChallenge(phone: "+966500000001") == nil)
        #expect(try accounts.sessionsRevoked(since: 20).map(\.familyID) == ["f1"])
        let ratings = try accounts.ratings(ofCoach: "k1")
        #expect(ratings.count == 1 && ratings.average == 4 && ratings.recent.first?.feedback == nil)
        // The email and the phone are free.
        try accounts.createUser(id: "c3", role: "client", fullName: nil, email: "sara@example.com", phone: "+966500000001",
                                passwordHash: nil, now: 30)

        // Again: the first time stays.
        #expect(try accounts.erase(userID: "c1", now: 40).erasedAt == 20)

        // Lina leaves too: the coach may go, and is no longer listed.
        _ = try accounts.erase(userID: "c2", now: 50)
        #expect(try accounts.linkedClientCount(coachID: "k1") == 0)
        #expect(try accounts.erase(userID: "k1", now: 60).role == "coach")
        #expect(try accounts.listCoaches().isEmpty)
        #expect(try accounts.user(id: "k1")?.role == "coach")
    }
}

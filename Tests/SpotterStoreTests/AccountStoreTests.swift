import Testing
@testable import SpotterStore

/// Users, refresh tokens, OTP challenges and onboarding against an in-memory store.
@Suite("AccountStore: accounts and sessions")
struct AccountStoreTests {
    let accounts: AccountStore
    let store: Store

    init() throws {
        store = try Store.inMemory()
        accounts = AccountStore(store)
    }

    @Test("the migrations are applied in order")
    func migrations() throws {
        #expect(try store.appliedMigrations() == ["v1-serverRun", "v2-accounts", "v3-messaging", "v4-revocations", "v5-log", "v6-time-zone", "v7-sessions", "v8-tiers", "v9-ratings", "v10-attachments", "v11-record", "v12-api-keys", "v13-profile"])
    }

    @Test("creating a client and a coach; the coach gets a coach row")
    func createUsers() throws {
        let client = try accounts.createUser(id: "c1", role: "client", fullName: "Sara", email: "sara@example.com",
                                             phone: nil, passwordHash: "$scrypt$x", now: 100)
        #expect(client == UserRecord(id: "c1", role: "client", fullName: "Sara", email: "sara@example.com", phone: nil,
                                     passwordHash: "$scrypt$x", language: "en", onboardingCompleted: false, createdAt: 100))
        try accounts.createUser(id: "k1", role: "coach", fullName: "Khalid", email: "k@example.com", phone: nil,
                                passwordHash: nil, now: 101)
        let coaches = try accounts.listCoaches()
        #expect(coaches.map(\.id) == ["k1"])
        #expect(try accounts.user(id: "k1")?.role == "coach")
    }

    @Test("a duplicate email is emailTaken, a duplicate phone phoneTaken; nothing is written")
    func duplicates() throws {
        try accounts.createUser(id: "a", role: "client", fullName: nil, email: "a@example.com", phone: "+966500000001",
                                passwordHash: nil, now: 1)
        #expect(throws: AccountStoreError.emailTaken) {
            try accounts.createUser(id: "b", role: "coach", fullName: nil, email: "a@example.com", phone: nil,
                                    passwordHash: nil, now: 2)
        }
        #expect(throws: AccountStoreError.phoneTaken) {
            try accounts.createUser(id: "c", role: "client", fullName: nil, email: nil, phone: "+966500000001",
                                    passwordHash: nil, now: 3)
        }
        #expect(try accounts.user(id: "b") == nil)
        #expect(try accounts.user(id: "c") == nil)
        #expect(try accounts.listCoaches().isEmpty)
    }

    @Test("look-ups by id, email and phone; setLanguage")
    func lookups() throws {
        try accounts.createUser(id: "u1", role: "client", fullName: "Noura", email: "n@example.com", phone: "+966511111111",
                                passwordHash: nil, now: 5)
        #expect(try accounts.user(email: "n@example.com")?.id == "u1")
        #expect(try accounts.user(phone: "+966511111111")?.id == "u1")
        #expect(try accounts.user(email: "other@example.com") == nil)
        #expect(try accounts.user(phone: "+966522222222") == nil)
        #expect(try accounts.user(id: "nobody") == nil)
        try accounts.setLanguage(userID: "u1", "ar")
        #expect(try accounts.user(id: "u1")?.language == "ar")
        #expect(throws: AccountStoreError.notFound) { try accounts.setLanguage(userID: "nobody", "ar") }
    }

    private func makeUser(_ id: String = "u1") throws {
        try accounts.createUser(id: id, role: "client", fullName: nil, email: "\(id)@example.com", phone: nil,
                                passwordHash: nil, now: 0)
    }

    @Test("rotation: rotate, then reuse of the old token revokes the family")
    func rotationAndReuse() throws {
        try makeUser()
        try accounts.storeRefreshToken(hash: "t1", userID: "u1", familyID: "f1", now: 10, expiresAt: 1_000)
        #expect(try accounts.isFamilyActive("f1", now: 20))
        #expect(try accounts.rotateRefreshToken(oldHash: "t1", newHash: "t2", now: 20, newExpiresAt: 2_000)
            == .rotated(userID: "u1", familyID: "f1"))
        #expect(try accounts.isFamilyActive("f1", now: 1_500))   // t2 lives until 2000
        #expect(try accounts.rotateRefreshToken(oldHash: "t1", newHash: "t3", now: 30, newExpiresAt: 2_000)
            == .reused(userID: "u1", familyID: "f1"))
        #expect(try accounts.rotateRefreshToken(oldHash: "t2", newHash: "t4", now: 40, newExpiresAt: 2_000) == .invalid)
        #expect(try !accounts.isFamilyActive("f1", now: 40))
    }

    @Test("unknown and expired tokens are invalid")
    func invalidTokens() throws {
        try makeUser()
        #expect(try accounts.rotateRefreshToken(oldHash: "nope", newHash: "x", now: 1, newExpiresAt: 100) == .invalid)
        try accounts.storeRefreshToken(hash: "old", userID: "u1", familyID: "f", now: 0, expiresAt: 50)
        #expect(try accounts.rotateRefreshToken(oldHash: "old", newHash: "x", now: 50, newExpiresAt: 100) == .invalid)
        #expect(try !accounts.isFamilyActive("f", now: 50))
        // The refused rotation stored nothing.
        #expect(try accounts.rotateRefreshToken(oldHash: "x", newHash: "y", now: 51, newExpiresAt: 100) == .invalid)
    }

    @Test("revokeFamily ends every token of the family and no other")
    func revokeFamily() throws {
        try makeUser()
        try accounts.storeRefreshToken(hash: "a1", userID: "u1", familyID: "fa", now: 0, expiresAt: 1_000)
        try accounts.storeRefreshToken(hash: "b1", userID: "u1", familyID: "fb", now: 0, expiresAt: 1_000)
        #expect(try accounts.rotateRefreshToken(oldHash: "a1", newHash: "a2", now: 1, newExpiresAt: 1_000)
            == .rotated(userID: "u1", familyID: "fa"))
        #expect(try accounts.revokeFamily(ofTokenHash: "a1", now: 2) == RevokedSession(userID: "u1", familyID: "fa", revokedAt: 2))
        #expect(try !accounts.isFamilyActive("fa", now: 3))
        #expect(try accounts.rotateRefreshToken(oldHash: "a2", newHash: "a3", now: 3, newExpiresAt: 1_000) == .invalid)
        #expect(try accounts.isFamilyActive("fb", now: 3))
        #expect(try accounts.revokeFamily(ofTokenHash: "unknown", now: 4) == nil)
        #expect(try !accounts.isFamilyActive("never-existed", now: 0))
        // What a starting server loads: revocations from a point on, one per family.
        #expect(try accounts.sessionsRevoked(since: 2) == [RevokedSession(userID: "u1", familyID: "fa", revokedAt: 2)])
        #expect(try accounts.sessionsRevoked(since: 3).isEmpty)
    }

    @Test("a refresh token presented for another user is foreign and changes nothing")
    func foreignRotation() throws {
        try makeUser()
        try accounts.storeRefreshToken(hash: "v1", userID: "u1", familyID: "fv", now: 0, expiresAt: 1_000)
        #expect(try accounts.rotateRefreshToken(oldHash: "v1", newHash: "x", now: 1, newExpiresAt: 1_000, ownerID: "attacker") == .foreign)
        // The victim's token still rotates normally: it was neither rotated nor revoked.
        #expect(try accounts.rotateRefreshToken(oldHash: "v1", newHash: "v2", now: 2, newExpiresAt: 1_000, ownerID: "u1")
            == .rotated(userID: "u1", familyID: "fv"))
        // A reused token of another user does not revoke their family either.
        #expect(try accounts.rotateRefreshToken(oldHash: "v1", newHash: "y", now: 3, newExpiresAt: 1_000, ownerID: "attacker") == .foreign)
        #expect(try accounts.isFamilyActive("fv", now: 3))
    }

    @Test("OTP challenges are saved, replaced, loaded and deleted")
    func otp() throws {
        #expect(try accounts.otpChallenge(phone: "+966500000000") == nil)
        try accounts.saveOTPChallenge(phone: "+966500000000", codeDigest: "d1", issuedAt: 10, failedAttempts: 0)
        var loaded = try #require(try accounts.otpChallenge(phone: "+966500000000"))
        #expect(loaded.codeDigest == "d1" && loaded.issuedAt == 10 && loaded.failedAttempts == 0)
        try accounts.saveOTPChallenge(phone: "+966500000000", codeDigest: "d1", issuedAt: 10, failedAttempts: 3)
        loaded = try #require(try accounts.otpChallenge(phone: "+966500000000"))
        #expect(loaded.failedAttempts == 3)
        try accounts.deleteOTPChallenge(phone: "+966500000000")
        #expect(try accounts.otpChallenge(phone: "+966500000000") == nil)
    }

    @Test("onboarding upserts the profile, records weights and marks the user")
    func onboarding() throws {
        try makeUser()
        var profile = ClientProfileRecord(userId: "u1", dateOfBirth: "1990-05-01", gender: "female", heightCm: 165,
                                          weightKg: 70.5, goal: "Get stronger", experienceLevel: "beginner",
                                          dietaryRestrictions: ["vegetarian", "no \"nuts\""], medicalConditions: [],
                                          updatedAt: 100)
        try accounts.saveOnboarding(profile, now: 100)
        #expect(try accounts.clientProfile(userID: "u1") == profile)
        #expect(try accounts.user(id: "u1")?.onboardingCompleted == true)
        profile.weightKg = 68
        profile.medicalConditions = ["asthma"]
        profile.updatedAt = 200
        try accounts.saveOnboarding(profile, now: 200)
        #expect(try accounts.clientProfile(userID: "u1") == profile)
        let weights = try store.writer.read { db in
            try Double.fetchAll(db, sql: "SELECT weightKg FROM weightEntry WHERE clientId = 'u1' ORDER BY id")
        }
        #expect(weights == [70.5, 68])
        #expect(try accounts.clientProfile(userID: "nobody") == nil)
        profile.userId = "nobody"
        #expect(throws: AccountStoreError.notFound) { try accounts.saveOnboarding(profile, now: 300) }
    }
}

import Testing
@testable import SpotterPorts
import SpotterProtocol
@testable import SpotterStore

/// Users, refresh tokens, OTP challenges and onboarding, on every engine of the accounts.
@Suite("AccountStore: accounts and sessions")
struct AccountStoreTests {

    @Test("the migrations are applied in order")
    func migrations() throws {
        #expect(try Store.inMemory().appliedMigrations() == ["v1-serverRun", "v2-accounts", "v3-messaging", "v4-revocations", "v5-log", "v6-time-zone", "v7-sessions", "v8-tiers", "v9-ratings", "v10-attachments", "v11-record", "v12-api-keys", "v13-profile", "v14-log-consumers", "v15-devices", "v16-notifications", "v17-reminder-channels", "v18-push-outbox", "v20-webhooks", "v21-service-tier", "v22-erasure", "v23-onboarding-fields", "v24-session-feedback", "v25-availability", "v26-ai-quota", "v28-identity-links", "v29-goal-preferences", "v30-receipt-by-number"])
    }

    @Test("creating a client and a coach; the coach gets a coach row", arguments: AccountsBackend.allCases)
    func createUsers(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let client = try f.accounts.createUser(id: "c1", role: "client", fullName: "Sara", email: "sara@example.com",
                                             phone: nil, passwordHash: "$scrypt$x", now: 100)
        #expect(client == UserRecord(id: "c1", role: "client", fullName: "Sara", email: "sara@example.com", phone: nil,
                                     passwordHash: "$scrypt$x", language: "en", onboardingCompleted: false, createdAt: 100))
        try f.accounts.createUser(id: "k1", role: "coach", fullName: "Khalid", email: "k@example.com", phone: nil,
                                passwordHash: nil, now: 101)
        let coaches = try f.accounts.listCoaches()
        #expect(coaches.map(\.id) == ["k1"])
        #expect(try f.accounts.user(id: "k1")?.role == "coach")
    }

    @Test("a duplicate email is emailTaken, a duplicate phone phoneTaken; nothing is written", arguments: AccountsBackend.allCases)
    func duplicates(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try f.accounts.createUser(id: "a", role: "client", fullName: nil, email: "a@example.com", phone: "+966500000001",
                                passwordHash: nil, now: 1)
        #expect(throws: AccountStoreError.emailTaken) {
            try f.accounts.createUser(id: "b", role: "coach", fullName: nil, email: "a@example.com", phone: nil,
                                    passwordHash: nil, now: 2)
        }
        #expect(throws: AccountStoreError.phoneTaken) {
            try f.accounts.createUser(id: "c", role: "client", fullName: nil, email: nil, phone: "+966500000001",
                                    passwordHash: nil, now: 3)
        }
        #expect(try f.accounts.user(id: "b") == nil)
        #expect(try f.accounts.user(id: "c") == nil)
        #expect(try f.accounts.listCoaches().isEmpty)
    }

    @Test("look-ups by id, email and phone; setLanguage", arguments: AccountsBackend.allCases)
    func lookups(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try f.accounts.createUser(id: "u1", role: "client", fullName: "Noura", email: "n@example.com", phone: "+966511111111",
                                passwordHash: nil, now: 5)
        #expect(try f.accounts.user(email: "n@example.com")?.id == "u1")
        #expect(try f.accounts.user(phone: "+966511111111")?.id == "u1")
        #expect(try f.accounts.user(email: "other@example.com") == nil)
        #expect(try f.accounts.user(phone: "+966522222222") == nil)
        #expect(try f.accounts.user(id: "nobody") == nil)
        try f.accounts.setLanguage(userID: "u1", "ar")
        #expect(try f.accounts.user(id: "u1")?.language == "ar")
        #expect(throws: AccountStoreError.notFound) { try f.accounts.setLanguage(userID: "nobody", "ar") }
    }

    private func makeUser(_ f: AccountsFixture, _ id: String = "u1") throws {
        try f.accounts.createUser(id: id, role: "client", fullName: nil, email: "\(id)@example.com", phone: nil,
                                passwordHash: nil, now: 0)
    }

    @Test("rotation: rotate, then reuse of the old token revokes the family", arguments: AccountsBackend.allCases)
    func rotationAndReuse(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try makeUser(f)
        try f.accounts.storeRefreshToken(hash: "t1", userID: "u1", familyID: "f1", now: 10, expiresAt: 1_000)
        #expect(try f.accounts.isFamilyActive("f1", now: 20))
        #expect(try f.accounts.rotateRefreshToken(oldHash: "t1", newHash: "t2", now: 20, newExpiresAt: 2_000)
            == .rotated(userID: "u1", familyID: "f1"))
        #expect(try f.accounts.isFamilyActive("f1", now: 1_500))   // t2 lives until 2000
        #expect(try f.accounts.rotateRefreshToken(oldHash: "t1", newHash: "t3", now: 30, newExpiresAt: 2_000)
            == .reused(userID: "u1", familyID: "f1"))
        #expect(try f.accounts.rotateRefreshToken(oldHash: "t2", newHash: "t4", now: 40, newExpiresAt: 2_000) == .invalid)
        #expect(try !f.accounts.isFamilyActive("f1", now: 40))
    }

    @Test("unknown and expired tokens are invalid", arguments: AccountsBackend.allCases)
    func invalidTokens(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try makeUser(f)
        #expect(try f.accounts.rotateRefreshToken(oldHash: "nope", newHash: "x", now: 1, newExpiresAt: 100) == .invalid)
        try f.accounts.storeRefreshToken(hash: "old", userID: "u1", familyID: "f", now: 0, expiresAt: 50)
        #expect(try f.accounts.rotateRefreshToken(oldHash: "old", newHash: "x", now: 50, newExpiresAt: 100) == .invalid)
        #expect(try !f.accounts.isFamilyActive("f", now: 50))
        // The refused rotation stored nothing.
        #expect(try f.accounts.rotateRefreshToken(oldHash: "x", newHash: "y", now: 51, newExpiresAt: 100) == .invalid)
    }

    @Test("revokeFamily ends every token of the family and no other", arguments: AccountsBackend.allCases)
    func revokeFamily(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try makeUser(f)
        try f.accounts.storeRefreshToken(hash: "a1", userID: "u1", familyID: "fa", now: 0, expiresAt: 1_000)
        try f.accounts.storeRefreshToken(hash: "b1", userID: "u1", familyID: "fb", now: 0, expiresAt: 1_000)
        #expect(try f.accounts.rotateRefreshToken(oldHash: "a1", newHash: "a2", now: 1, newExpiresAt: 1_000)
            == .rotated(userID: "u1", familyID: "fa"))
        #expect(try f.accounts.revokeFamily(ofTokenHash: "a1", now: 2) == RevokedSession(userID: "u1", familyID: "fa", revokedAt: 2))
        #expect(try !f.accounts.isFamilyActive("fa", now: 3))
        #expect(try f.accounts.rotateRefreshToken(oldHash: "a2", newHash: "a3", now: 3, newExpiresAt: 1_000) == .invalid)
        #expect(try f.accounts.isFamilyActive("fb", now: 3))
        #expect(try f.accounts.revokeFamily(ofTokenHash: "unknown", now: 4) == nil)
        #expect(try !f.accounts.isFamilyActive("never-existed", now: 0))
        // What a starting server loads: revocations from a point on, one per family.
        #expect(try f.accounts.sessionsRevoked(since: 2) == [RevokedSession(userID: "u1", familyID: "fa", revokedAt: 2)])
        #expect(try f.accounts.sessionsRevoked(since: 3).isEmpty)
    }

    @Test("a refresh token presented for another user is foreign and changes nothing", arguments: AccountsBackend.allCases)
    func foreignRotation(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try makeUser(f)
        try f.accounts.storeRefreshToken(hash: "v1", userID: "u1", familyID: "fv", now: 0, expiresAt: 1_000)
        #expect(try f.accounts.rotateRefreshToken(oldHash: "v1", newHash: "x", now: 1, newExpiresAt: 1_000, ownerID: "attacker") == .foreign)
        // The victim's token still rotates normally: it was neither rotated nor revoked.
        #expect(try f.accounts.rotateRefreshToken(oldHash: "v1", newHash: "v2", now: 2, newExpiresAt: 1_000, ownerID: "u1")
            == .rotated(userID: "u1", familyID: "fv"))
        // A reused token of another user does not revoke their family either.
        #expect(try f.accounts.rotateRefreshToken(oldHash: "v1", newHash: "y", now: 3, newExpiresAt: 1_000, ownerID: "attacker") == .foreign)
        #expect(try f.accounts.isFamilyActive("fv", now: 3))
    }

    @Test("OTP challenges are saved, replaced, loaded and deleted", arguments: AccountsBackend.allCases)
    func otp(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        #expect(try f.accounts.otpChallenge(phone: "+966500000000") == nil)
        try f.accounts.saveOTPChallenge(phone: "+966500000000", codeDigest: "d1", issuedAt: 10, failedAttempts: 0)
        var loaded = try #require(try f.accounts.otpChallenge(phone: "+966500000000"))
        #expect(loaded.codeDigest == "d1" && loaded.issuedAt == 10 && loaded.failedAttempts == 0)
        try f.accounts.saveOTPChallenge(phone: "+966500000000", codeDigest: "d1", issuedAt: 10, failedAttempts: 3)
        loaded = try #require(try f.accounts.otpChallenge(phone: "+966500000000"))
        #expect(loaded.failedAttempts == 3)
        try f.accounts.deleteOTPChallenge(phone: "+966500000000")
        #expect(try f.accounts.otpChallenge(phone: "+966500000000") == nil)
    }

    @Test("onboarding upserts the profile, records weights and marks the user", arguments: AccountsBackend.allCases)
    func onboarding(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try makeUser(f)
        var profile = ClientProfileView(clientId: "u1", dateOfBirth: "1990-05-01", age: nil, gender: "female", heightCm: 165,
                                        weightKg: 70.5, goal: "Get stronger", experienceLevel: "beginner",
                                        dietaryRestrictions: ["vegetarian", "no \"nuts\""], medicalConditions: [])
        try f.accounts.saveOnboarding(profile, now: 100)
        #expect(try f.accounts.clientProfile(userID: "u1") == profile)
        #expect(try f.accounts.user(id: "u1")?.onboardingCompleted == true)
        profile.weightKg = 68
        profile.medicalConditions = ["asthma"]
        try f.accounts.saveOnboarding(profile, now: 200)
        #expect(try f.accounts.clientProfile(userID: "u1") == profile)
        #expect(try f.column("SELECT updatedAt FROM clientProfile WHERE userId = 'u1'") == [200])
        let weights: [Double] = try f.column("SELECT weightKg FROM weightEntry WHERE clientId = 'u1' ORDER BY id")
        #expect(weights == [70.5, 68])
        #expect(try f.accounts.clientProfile(userID: "nobody") == nil)
        profile.clientId = "nobody"
        #expect(throws: AccountStoreError.notFound) { try f.accounts.saveOnboarding(profile, now: 300) }
    }
}

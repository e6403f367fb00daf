import Testing
@testable import SpotterPorts

/// The rest of the accounts' SQL — profile edits, email changes, avatars, tiers, passwords, ratings, API keys,
/// load provisioning — on every engine (the server's tests cover their behaviour over HTTP on SQLite).
@Suite("AccountStore: profile, ratings, keys and provisioning")
struct AccountProfileTests {
    @Test("profile, email change, avatar, tier and password change", arguments: AccountsBackend.allCases)
    func profile(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        try accounts.createUser(id: "u1", role: "client", fullName: "Noura", email: "n@example.com", phone: nil,
                                passwordHash: "old", now: 1)
        try accounts.createUser(id: "u2", role: "coach", fullName: "Khalid", email: "k@example.com", phone: nil,
                                passwordHash: nil, now: 2)
        let edited = try accounts.updateProfile(userID: "u1", language: "ar", timeZone: "Asia/Riyadh", fullName: nil)
        #expect(edited.language == "ar" && edited.timeZone == "Asia/Riyadh" && edited.fullName == "Noura")
        #expect(throws: AccountStoreError.notFound) { try accounts.updateProfile(userID: "nobody", language: "en", timeZone: nil) }

        #expect(throws: AccountStoreError.emailTaken) {
            try accounts.saveEmailChange(userID: "u1", .init(email: "k@example.com", codeDigest: "d", issuedAt: 5, failedAttempts: 0))
        }
        try accounts.saveEmailChange(userID: "u1", .init(email: "new@example.com", codeDigest: "d1", issuedAt: 5, failedAttempts: 0))
        try accounts.countEmailChangeFailure(userID: "u1", failedAttempts: 2)
        #expect(try accounts.emailChange(userID: "u1") == .init(email: "new@example.com", codeDigest: "d1", issuedAt: 5, failedAttempts: 2))
        #expect(try accounts.confirmEmailChange(userID: "u1").email == "new@example.com")
        #expect(try accounts.emailChange(userID: "u1") == nil)
        #expect(try accounts.user(email: "new@example.com")?.id == "u1")

        #expect(try accounts.setAvatar(userID: "u1", "abc123").avatar == "abc123")
        #expect(try accounts.setAvatar(userID: "u1", nil).avatar == nil)
        #expect(try accounts.setTier(userID: "u1", "premium").tier == "premium")
        #expect(throws: AccountStoreError.conflict("not_a_client")) { try accounts.setTier(userID: "u2", "premium") }

        try accounts.storeRefreshToken(hash: "h1", userID: "u1", familyID: "f1", now: 10, expiresAt: 1000)
        try accounts.storeRefreshToken(hash: "h2", userID: "u1", familyID: "f2", now: 10, expiresAt: 1000)
        let revoked = try accounts.changePassword(userID: "u1", hash: "new", keep: "f2", now: 20)
        #expect(revoked.map(\.familyID) == ["f1"])
        #expect(try accounts.passwordHash(userID: "u1") == "new")
        #expect(try accounts.isFamilyActive("f1", now: 30) == false && accounts.isFamilyActive("f2", now: 30) == true)
        #expect(try accounts.sessionsRevoked(since: 0).map(\.familyID) == ["f1"])
    }

    @Test("ratings average, count skips, newest first", arguments: AccountsBackend.allCases)
    func ratings(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        for (index, stars) in [5, 4, nil, 4].enumerated() {
            try accounts.addRating(RatingRecord(coachId: "k", clientId: "c\(index)", stars: stars, feedback: stars.map { "f\($0)" },
                                                sessionId: nil, createdAt: 100))
        }
        let summary = try accounts.ratings(ofCoach: "k", limit: 2)
        #expect(summary.average.map { ($0 * 1000).rounded() } == 4333)
        #expect(summary.count == 3 && summary.skipped == 1)
        // Same second: the later insert first.
        #expect(summary.recent.map(\.clientId) == ["c3", "c2"])
        #expect(try accounts.ratings(ofCoach: "nobody").average == nil)
    }

    @Test("API keys are made, found by hash, listed and revoked", arguments: AccountsBackend.allCases)
    func apiKeys(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        _ = try accounts.createAPIKey(id: "key1", name: "billing", keyHash: "sha1", createdBy: "admin", now: 5)
        _ = try accounts.createAPIKey(id: "key2", name: "crm", keyHash: "sha2", createdBy: "admin", now: 6)
        #expect(try accounts.apiKeyID(hash: "sha2") == "key2")
        #expect(try accounts.revokeAPIKey(id: "key2", now: 7) == true)
        #expect(try accounts.revokeAPIKey(id: "nope", now: 7) == false)
        #expect(try accounts.apiKeyID(hash: "sha2") == nil)
        #expect(try accounts.apiKeys().map(\.id) == ["key2", "key1"] && accounts.apiKeys().first?.revokedAt == 7)
    }

    @Test("load accounts are provisioned with their links and threads", arguments: AccountsBackend.allCases)
    func provisioning(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let counter = IDCounter()
        let coaches = try f.accounts.provisionLoadAccounts(batch: "b", coaches: 2, clientsPerCoach: 3, passwordHash: "x", now: 1,
                                                           makeID: { counter.next() })
        #expect(coaches.count == 2 && coaches.allSatisfy { $0.clients.count == 3 })
        let client = try #require(coaches.first?.clients.first)
        #expect(try f.accounts.link(clientID: client.clientID)?.threadId == client.threadID)
        let threads: [Int] = try f.column("SELECT COUNT(*) FROM thread")
        #expect(threads == [6])
    }
}

private final class IDCounter: @unchecked Sendable {
    private var value = 0
    func next() -> String { value += 1; return "id\(value)" }
}

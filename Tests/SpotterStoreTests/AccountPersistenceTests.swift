import Foundation
import Testing
@testable import SpotterPorts
import SpotterProtocol
@testable import SpotterStore

@Suite("AccountStore: persistence")
struct AccountPersistenceTests {
    @Test("accounts, tokens and links survive reopening a file database")
    func reopen() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-accounts-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let accounts = AccountStore(try Store.open(directory: directory))
            try accounts.createUser(id: "k1", role: "coach", fullName: "Khalid", email: "k@example.com", phone: nil,
                                    passwordHash: nil, now: 1)
            try accounts.createUser(id: "c1", role: "client", fullName: "Mona", email: "m@example.com",
                                    phone: "+966500000000", passwordHash: "$scrypt$h", now: 2)
            try accounts.storeRefreshToken(hash: "t1", userID: "c1", familyID: "f1", now: 3, expiresAt: 1_000)
            try accounts.createLink(clientID: "c1", coachID: "k1", threadID: "th1", now: 4)
        }
        let reopened = try Store.open(directory: directory)
        #expect(try reopened.appliedMigrations() == ["v1-serverRun", "v2-accounts", "v3-messaging", "v4-revocations", "v5-log", "v6-time-zone", "v7-sessions", "v8-tiers", "v9-ratings", "v10-attachments", "v11-record", "v12-api-keys", "v13-profile", "v14-log-consumers", "v15-devices", "v16-notifications", "v17-reminder-channels", "v18-push-outbox", "v20-webhooks", "v21-service-tier", "v22-erasure", "v23-onboarding-fields", "v24-session-feedback", "v25-availability", "v26-ai-quota", "v28-identity-links", "v29-goal-preferences", "v30-receipt-by-number"])
        let accounts = AccountStore(reopened)
        #expect(try accounts.user(phone: "+966500000000")?.passwordHash == "$scrypt$h")
        #expect(try accounts.link(clientID: "c1") == LinkView(clientId: "c1", coachId: "k1", threadId: "th1"))
        #expect(try accounts.isFamilyActive("f1", now: 10))
        #expect(try accounts.rotateRefreshToken(oldHash: "t1", newHash: "t2", now: 10, newExpiresAt: 2_000)
            == .rotated(userID: "c1", familyID: "f1"))
    }

    @Test("foreign keys are enforced: a token for an unknown user is refused")
    func foreignKeys() throws {
        let accounts = AccountStore(try Store.inMemory())
        #expect(throws: (any Error).self) {
            try accounts.storeRefreshToken(hash: "t", userID: "ghost", familyID: "f", now: 0, expiresAt: 10)
        }
    }
}

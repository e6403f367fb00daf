import Testing
@testable import SpotterPorts
import SpotterProtocol
@testable import SpotterStore

/// Feedback after a session in the accounts store, on every engine: once per side, read back whole, and the notes
/// (not the rating) gone with their author's erasure.
@Suite("AccountStore: session feedback")
struct SessionFeedbackStoreTests {
    @Test("once per side; a second is a conflict and changes nothing; erasure drops the author's notes",
          arguments: AccountsBackend.allCases)
    func oncePerSideAndErased(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try f.accounts.createUser(id: "c1", role: "client", fullName: "Sara", email: "s@example.com", phone: nil,
                                  passwordHash: nil, now: 1)
        let client = SessionFeedbackRecord(sessionId: "s1", side: "client", authorId: "c1", rating: 5,
                                           notes: "Great\nthanks", createdAt: 10)
        let coach = SessionFeedbackRecord(sessionId: "s1", side: "coach", authorId: "k1", rating: 2, notes: "private",
                                          createdAt: 11)
        try f.accounts.addSessionFeedback(client)
        try f.accounts.addSessionFeedback(coach)
        var again = client
        again.rating = 1
        #expect(throws: AccountStoreError.conflict("feedback_given")) { try f.accounts.addSessionFeedback(again) }
        #expect(try f.accounts.sessionFeedback(sessionID: "s1") == [client, coach].sorted { $0.side < $1.side })
        #expect(try f.accounts.sessionFeedback(sessionID: "s2").isEmpty)

        _ = try f.accounts.erase(userID: "c1", now: 20)
        let after = try f.accounts.sessionFeedback(sessionID: "s1")
        #expect(after.first { $0.side == "client" }?.notes == nil && after.first { $0.side == "client" }?.rating == 5)
        #expect(after.first { $0.side == "coach" }?.notes == "private")
    }
}

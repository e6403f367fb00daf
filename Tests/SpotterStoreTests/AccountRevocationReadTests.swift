import Testing
@testable import SpotterPorts
import SpotterProtocol
@testable import SpotterStore

/// `AccountStore.revocation(ofSession:)`: what a cluster's process reads before letting an access token in
/// (`API.checkedAcrossProcesses`), on both engines.
@Suite("AccountStore: a session's revocation read by family")
struct AccountRevocationReadTests {
    @Test("a revoked family is found with its user and time; a live, rotated or unknown one is not", arguments: AccountsBackend.allCases)
    func revocationOfASession(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        for id in ["u1", "u2"] {
            try f.accounts.createUser(id: id, role: "client", fullName: nil, email: "\(id)@example.com", phone: nil,
                                      passwordHash: nil, now: 0)
        }
        try f.accounts.storeRefreshToken(hash: "a1", userID: "u1", familyID: "fa", now: 0, expiresAt: 1_000)
        try f.accounts.storeRefreshToken(hash: "b1", userID: "u1", familyID: "fb", now: 0, expiresAt: 1_000)
        try f.accounts.storeRefreshToken(hash: "c1", userID: "u2", familyID: "fc", now: 0, expiresAt: 1_000)
        // Rotated, not revoked: still a live session.
        _ = try f.accounts.rotateRefreshToken(oldHash: "a1", newHash: "a2", now: 1, newExpiresAt: 1_000)
        #expect(try f.accounts.revocation(ofSession: "fa") == nil)
        #expect(try f.accounts.revocation(ofSession: "fb") == nil)
        // Signed out with the older token of the family: every token of it revoked, one answer.
        try f.accounts.revokeFamily(ofTokenHash: "a1", now: 7)
        #expect(try f.accounts.revocation(ofSession: "fa") == RevokedSession(userID: "u1", familyID: "fa", revokedAt: 7))
        // Another session of the same user and another user's are untouched.
        #expect(try f.accounts.revocation(ofSession: "fb") == nil)
        #expect(try f.accounts.revocation(ofSession: "fc") == nil)
        // Unknown, empty and odd family ids (a token's `sid` is whatever was signed; never an error).
        for id in ["", "never-existed", "fa' OR '1'='1", String(repeating: "x", count: 10_000), "\u{0}\u{7}"] {
            #expect(try f.accounts.revocation(ofSession: id) == nil, "\(id.prefix(20))")
        }
        // Revoked again later (a second sign-out finds nothing left to revoke): the first time stays.
        try f.accounts.revokeFamily(ofTokenHash: "a2", now: 9)
        #expect(try f.accounts.revocation(ofSession: "fa")?.revokedAt == 7)
    }
}

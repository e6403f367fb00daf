import Foundation
import Testing
@testable import SpotterPorts
import SpotterProtocol
@testable import SpotterStore

/// Accounts as a server runs them: writes through the one store writer, committed users kept in the directory.
@Suite("AccountStore through the one writer, with the user directory")
struct AccountDirectoryTests {
    let store: Store
    let writer: StoreWriter
    let directory: UserDirectory
    let accounts: AccountStore

    init() throws {
        store = try Store.inMemory()
        writer = StoreWriter(store: store)
        directory = UserDirectory()
        accounts = AccountStore(store, writer: writer, directory: directory)
    }

    @Test("every account write is a job of the one writer, committed before the call returns")
    func writesGoThroughTheWriter() throws {
        defer { writer.stop() }
        let before = writer.jobsCommitted
        try accounts.createUser(id: "c1", role: "client", fullName: "Sara", email: "s@example.com", phone: nil,
                                passwordHash: "$scrypt$x", now: 1)
        try accounts.setLanguage(userID: "c1", "ar")
        try accounts.saveOTPChallenge(phone: "+966500000001", codeDigest: "d", issuedAt: 1, failedAttempts: 0)
        try accounts.storeRefreshToken(hash: "h", userID: "c1", familyID: "f", now: 1, expiresAt: 100)
        #expect(writer.jobsCommitted == before + 4)
        // Committed: another connection sees it.
        #expect(try AccountStore(store).user(id: "c1")?.language == "ar")
    }

    @Test("a refused write rolls back only itself and reaches neither the database nor the directory")
    func refusedWrite() throws {
        defer { writer.stop() }
        try accounts.createUser(id: "a", role: "client", fullName: nil, email: "a@example.com", phone: nil,
                                passwordHash: nil, now: 1)
        #expect(throws: AccountStoreError.emailTaken) {
            try accounts.createUser(id: "b", role: "client", fullName: nil, email: "a@example.com", phone: nil,
                                    passwordHash: nil, now: 2)
        }
        #expect(directory.user(id: "b") == nil)
        #expect(try AccountStore(store).user(id: "b") == nil)
        #expect(throws: AccountStoreError.notFound) { try accounts.setLanguage(userID: "nobody", "ar") }
        #expect(directory.count == 1)
    }

    @Test("the directory holds each committed user as stored, without the password hash")
    func directoryFollowsWrites() throws {
        defer { writer.stop() }
        try accounts.createUser(id: "c1", role: "client", fullName: "Sara", email: "s@example.com", phone: nil,
                                passwordHash: "$scrypt$secret", now: 5)
        var expected = try #require(try AccountStore(store).user(id: "c1"))
        expected.passwordHash = nil
        #expect(directory.user(id: "c1") == expected)

        try accounts.setLanguage(userID: "c1", "ar")
        #expect(directory.user(id: "c1")?.language == "ar")

        try accounts.saveOnboarding(ClientProfileView(
            clientId: "c1", dateOfBirth: "1990-01-01", age: nil, gender: "female", heightCm: 165, weightKg: 60, goal: "lose_weight",
            experienceLevel: "beginner", dietaryRestrictions: [], medicalConditions: []), now: 6)
        #expect(directory.user(id: "c1")?.onboardingCompleted == true)
        // Re-hashing changes nothing the directory holds.
        try accounts.updatePasswordHash(userID: "c1", hash: "$scrypt$stronger")
        #expect(directory.user(id: "c1")?.passwordHash == nil)
    }

    @Test("a user written by another process is read on the first miss and kept")
    func missIsReadAndKept() throws {
        defer { writer.stop() }
        try AccountStore(store).createUser(id: "admin1", role: "admin", fullName: "Root", email: "r@example.com",
                                           phone: nil, passwordHash: "$scrypt$x", now: 1)
        #expect(directory.user(id: "admin1") == nil)
        #expect(try accounts.user(id: "admin1")?.role == "admin")
        #expect(directory.user(id: "admin1")?.role == "admin")
        #expect(directory.user(id: "admin1")?.passwordHash == nil)
    }

    @Test("provisioned load accounts are in the directory; a loaded directory equals the table")
    func provisionedAndLoaded() throws {
        defer { writer.stop() }
        let counter = Counter()
        let coaches = try accounts.provisionLoadAccounts(batch: "b", coaches: 2, clientsPerCoach: 3, passwordHash: "$x",
                                                         now: 9, makeID: { counter.next() })
        let ids = coaches.flatMap { [$0.coachID] + $0.clients.map(\.clientID) }
        #expect(ids.count == 8)
        #expect(directory.count == 8)
        let loaded = try UserDirectory.load(store)
        for id in ids {
            #expect(directory.user(id: id) != nil)
            #expect(directory.user(id: id) == loaded.user(id: id))
        }
        #expect(directory.user(id: coaches[0].clients[0].clientID)?.onboardingCompleted == true)
    }

    @Test("perform from many threads: each call returns its own committed result")
    func concurrentPerform() async throws {
        defer { writer.stop() }
        let accounts = self.accounts
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<40 {
                group.addTask {
                    try accounts.createUser(id: "u\(i)", role: "client", fullName: "U\(i)", email: "u\(i)@example.com",
                                            phone: nil, passwordHash: nil, now: Int64(i))
                }
            }
            try await group.waitForAll()
        }
        #expect(directory.count == 40)
        #expect(try UserDirectory.load(store).count == 40)
    }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> String {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return "id\(value)"
    }
}

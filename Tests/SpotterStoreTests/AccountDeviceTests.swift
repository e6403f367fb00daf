import Foundation
import GRDB
import Testing
import SpotterCore
@testable import SpotterPorts
@testable import SpotterStore

/// Push devices' SQL (`AccountStore+Devices`) on every engine: renewal, moving between accounts, the per-user
/// limit, ownership, and a session's end taking its devices. (The server's tests cover the same over HTTP.)
@Suite("AccountStore: push devices")
struct AccountDeviceTests {
    static func fcm(_ token: String) -> PushAddress { PushAddress(platform: .fcm, token: token) }

    /// Two users with a session each (`sa`, `sb`), and a second session `sa2` of the first.
    static func twoUsers(_ accounts: AccountStore) throws {
        try accounts.createUser(id: "a", role: "client", fullName: "A", email: "a@x.test", phone: nil, passwordHash: nil, now: 1)
        try accounts.createUser(id: "b", role: "coach", fullName: "B", email: "b@x.test", phone: nil, passwordHash: nil, now: 1)
        try accounts.storeRefreshToken(hash: "ta", userID: "a", familyID: "sa", now: 1, expiresAt: 10_000)
        try accounts.storeRefreshToken(hash: "ta2", userID: "a", familyID: "sa2", now: 1, expiresAt: 10_000)
        try accounts.storeRefreshToken(hash: "tb", userID: "b", familyID: "sb", now: 1, expiresAt: 10_000)
    }

    static func register(_ accounts: AccountStore, _ id: String, user: String, session: String, _ address: PushAddress,
                         now: Int64) throws -> (device: DeviceRecord, removed: [String]) {
        guard case .registered(let device, let removed) = try accounts.registerDevice(
            id: id, userID: user, sessionID: session, address, now: now) else { throw AccountStoreError.notFound }
        return (device, removed)
    }

    @Test("renewal keeps the id, another user takes the address, the least recent goes past ten",
          arguments: AccountsBackend.allCases)
    func registration(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        try Self.twoUsers(accounts)
        let web = PushAddress(platform: .webpush, token: "https://push.example.com/1", p256dh: "k1", auth: "s1")
        let first = try Self.register(accounts, "d1", user: "a", session: "sa", web, now: 100)
        #expect(first.device.id == "d1" && first.device.createdAt == 100 && first.device.address == web && first.removed == [])
        // The same address again, new keys, from another session: the same device, renewed.
        var rekeyed = web
        rekeyed.p256dh = "k2"
        let renewed = try Self.register(accounts, "d1-again", user: "a", session: "sa2", rekeyed, now: 150)
        #expect(renewed.device.id == "d1" && renewed.device.createdAt == 100 && renewed.device.registeredAt == 150)
        #expect(renewed.device.sessionID == "sa2" && renewed.device.address.p256dh == "k2")
        // Another user registers it: it moves, under a new id.
        let moved = try Self.register(accounts, "d2", user: "b", session: "sb", rekeyed, now: 200)
        #expect(moved.device.id == "d2" && moved.device.userID == "b" && moved.device.createdAt == 200)
        #expect(try accounts.devices(userID: "a").isEmpty)
        #expect(try accounts.devices(userID: "b").map(\.id) == ["d2"])

        // Eleven in the same second: the first registered goes.
        for index in 1...10 { _ = try Self.register(accounts, "a\(index)", user: "a", session: "sa", Self.fcm("t\(index)"), now: 300) }
        // Renewing a1 makes a2 the least recent.
        _ = try Self.register(accounts, "ignored", user: "a", session: "sa", Self.fcm("t1"), now: 300)
        let eleventh = try Self.register(accounts, "a11", user: "a", session: "sa", Self.fcm("t11"), now: 300)
        #expect(eleventh.removed == ["a2"])
        let listed = try accounts.devices(userID: "a").map(\.id)
        #expect(listed == ["a11", "a1", "a10", "a9", "a8", "a7", "a6", "a5", "a4", "a3"])
        // The same token on another platform is another address.
        let apns = PushAddress(platform: .apns, token: "t3", topic: "com.example", environment: "sandbox")
        #expect(try Self.register(accounts, "b1", user: "b", session: "sb", apns, now: 400).device.address == apns)
        #expect(try accounts.devices(userID: "a").count == 10)
    }

    @Test("a device is deleted by its owner only; a session's end takes its devices", arguments: AccountsBackend.allCases)
    func deletionAndSessions(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        let accounts = f.accounts
        try Self.twoUsers(accounts)
        _ = try Self.register(accounts, "one", user: "a", session: "sa", Self.fcm("t1"), now: 10)
        _ = try Self.register(accounts, "two", user: "a", session: "sa2", Self.fcm("t2"), now: 11)
        _ = try Self.register(accounts, "three", user: "b", session: "sb", Self.fcm("t3"), now: 12)
        #expect(try accounts.deleteDevice(id: "three", userID: "a") == false)
        #expect(try accounts.deleteDevice(id: "nothing", userID: "a") == false)
        #expect(try accounts.deleteDevice(id: "two", userID: "a") == true)
        #expect(try accounts.deleteDevice(id: "two", userID: "a") == false)
        _ = try Self.register(accounts, "two", user: "a", session: "sa2", Self.fcm("t2"), now: 13)

        // Sign-out of `sa` takes `one`, not `sa2`'s `two`.
        #expect(try accounts.revokeFamily(ofTokenHash: "ta", now: 20)?.familyID == "sa")
        #expect(try accounts.devices(userID: "a").map(\.id) == ["two"])
        // A revoked session registers nothing (its sign-out won the race).
        #expect(try accounts.registerDevice(id: "late", userID: "a", sessionID: "sa", Self.fcm("t9"), now: 21) == .sessionEnded)
        #expect(try accounts.devices(userID: "a").map(\.id) == ["two"])
        // A password change signs the other sessions out, and their devices go with them.
        _ = try Self.register(accounts, "four", user: "b", session: "sb", Self.fcm("t4"), now: 22)
        try accounts.storeRefreshToken(hash: "tb2", userID: "b", familyID: "sb2", now: 22, expiresAt: 10_000)
        _ = try Self.register(accounts, "five", user: "b", session: "sb2", Self.fcm("t5"), now: 23)
        #expect(try accounts.changePassword(userID: "b", hash: "h", keep: "sb2", now: 24).map(\.familyID) == ["sb"])
        #expect(try accounts.devices(userID: "b").map(\.id) == ["five"])
        // A reused refresh token revokes its family, and its devices.
        #expect(try accounts.rotateRefreshToken(oldHash: "ta2", newHash: "ta3", now: 25, newExpiresAt: 10_000)
            == .rotated(userID: "a", familyID: "sa2"))
        #expect(try accounts.rotateRefreshToken(oldHash: "ta2", newHash: "ta4", now: 26, newExpiresAt: 10_000)
            == .reused(userID: "a", familyID: "sa2"))
        #expect(try accounts.devices(userID: "a").isEmpty)
    }

    /// A database from before devices ("v14-log-consumers") migrates, and its sign-outs (which now delete devices)
    /// and registrations work.
    @Test func anOldSQLiteDatabaseGetsDevices() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spotter-devices-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try StoreDirectory.make(directory)
        do {
            let old = try DatabaseQueue(path: directory + "/spotter.sqlite")
            try Store.migrator.migrate(old, upTo: "v14-log-consumers")
            #expect(try old.read { db in try db.tableExists("device") } == false)
        }
        let accounts = AccountStore(try Store.open(directory: directory))
        try Self.twoUsers(accounts)
        _ = try Self.register(accounts, "one", user: "a", session: "sa", Self.fcm("t1"), now: 10)
        #expect(try accounts.revokeFamily(ofTokenHash: "ta", now: 20) != nil)
        #expect(try accounts.devices(userID: "a").isEmpty)
    }
}

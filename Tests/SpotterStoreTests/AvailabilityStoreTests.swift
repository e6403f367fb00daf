import Testing
@testable import SpotterPorts
import SpotterProtocol
@testable import SpotterStore

/// A coach's availability in the accounts store, on every engine: saved whole, replaced whole, read back the
/// same, one coach's not another's, gone with the coach's erasure.
@Suite("AccountStore: availability")
struct AvailabilityStoreTests {
    @Test("saved, replaced and read back whole; erased with the coach", arguments: AccountsBackend.allCases)
    func savedAndErased(_ backend: AccountsBackend) throws {
        let f = try AccountsFixture(backend)
        defer { f.close() }
        try f.accounts.createUser(id: "k1", role: "coach", fullName: "Kim", email: "k@example.com", phone: nil,
                                  passwordHash: nil, now: 1)
        #expect(try f.accounts.availability(coachID: "k1") == nil)
        let first = AvailabilityView(timeZone: "America/New_York", weekly: ["mon": [AvailabilityHours(start: "09:00", end: "17:00")]],
                                     exceptions: [AvailabilityException(date: "2027-12-25", hours: [])], bufferBeforeMinutes: 10,
                                     bufferAfterMinutes: 5, minimumNoticeMinutes: 60, maxSessionsPerDay: 4)
        try f.accounts.setAvailability(coachID: "k1", first, now: 10)
        #expect(try f.accounts.availability(coachID: "k1") == first)
        var second = first
        second.weekly = ["sat": [AvailabilityHours(start: "00:00", end: "24:00")]]
        second.maxSessionsPerDay = nil
        second.timeZone = "Asia/Riyadh — عربي"  // the store keeps what it is given; the rules checked it before
        try f.accounts.setAvailability(coachID: "k1", second, now: 11)
        #expect(try f.accounts.availability(coachID: "k1") == second)
        #expect(try f.accounts.availability(coachID: "k2") == nil)
        _ = try f.accounts.erase(userID: "k1", now: 20)
        #expect(try f.accounts.availability(coachID: "k1") == nil)
    }
}

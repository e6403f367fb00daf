import Foundation
import Testing
import SpotterCore
import SpotterPorts
@testable import SpotterStore
import TestSupport

/// The `account` record (issue 31) in every log engine: stored and read back as written, on no thread, and an
/// erasure forgets what a profile record of the user told (the name), leaving revocations and other users alone.
/// (Checked by hand: without the UPDATE in `MessageForgetting.erase`, the SQLite and PostgreSQL cases fail.)
@Suite("Account records in every log engine", .serialized)
struct AccountRecordLogTests {
    static func account(_ change: AccountChangeRecord, at: Int64 = 2000) -> ChatRecord {
        ChatRecord(threadNo: 0, side: .coach, seq: 0, at: at, .account(change))
    }

    @Test(arguments: try ChatLogConformanceTests.engines())
    func accountRecordsAreStoredReadAndForgottenByAnErasure(_ under: EngineUnderTest) throws {
        let log = under.engine
        let revoked = AccountChangeRecord(userID: "a", .sessionsRevoked(familyIDs: ["f1", "f\"2\n"], revokedAt: .max))
        let renamed = AccountChangeRecord(userID: "a", .profile(AccountProfile(fullName: "Amal \u{1}", language: "ar", timeZone: "Asia/Riyadh")))
        let other = AccountChangeRecord(userID: "b", .profile(AccountProfile(fullName: "Badr", tier: "premium")))
        let message = ChatRecord(threadNo: 1, side: .client, seq: 1, at: 1000, .message(MessageRecord(clientMessageID: "m1", body: "hi")))
        let positions = try waitFor { log.append([message, Self.account(revoked), Self.account(renamed), Self.account(other)], completion: $0) }
        #expect(positions.count == 4)
        var stored = try log.records(threadNos: [0], after: 0, limit: 10)
        #expect(stored.map(\.content) == [.account(revoked), .account(renamed), .account(other)])
        #expect(stored.map(\.pos) == Array(positions.dropFirst()) && stored.allSatisfy { $0.threadNo == 0 && $0.seq == 0 && $0.at == 2000 })
        // Not in a thread's history, not a send.
        #expect(try log.history(threadNo: 1, beforeSeq: nil, limit: 10).map(\.seq) == [1])
        #expect(try waitFor { log.sendsSince(threadNos: [1], side: .client, since: 0, completion: $0) } == 1)
        // "a" is erased: the name their profile record told goes; their revocation and "b"'s profile stay.
        _ = try waitFor { log.append([ChatRecord(threadNo: 0, side: .coach, seq: 0, at: 3000, .erasure(ErasureRecord(userID: "a")))],
                                     completion: $0) }
        stored = try log.records(threadNos: [0], after: 0, limit: 10)
        #expect(stored.prefix(3).map(\.content) == [.account(revoked), .account(AccountChangeRecord(userID: "a", .profile(AccountProfile()))),
                                                    .account(other)])
    }
}

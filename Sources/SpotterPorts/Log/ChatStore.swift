import SpotterCore
import SpotterProtocol

/// The log and the changes that write the accounts and the log in one transaction: what the messaging shell
/// needs of wherever the chat lives. `ChatLog` (SQLite) and `PostgresChatLog` implement it.
public protocol ChatStore: ChatLogEngine, ConsumableLog {
    /// A client picks their first coach: the link, the thread if the pair has none, and a `link` record, in one
    /// transaction. Throws `AccountStoreError` as `AccountStore.createLink` does.
    func createLink(clientID: String, coachID: String, threadID: String, now: Int64,
                    completion: @escaping @Sendable (Result<LinkOutcome<LinkView>, any Error>) -> Void)
    /// An admin decides a coach change; approved, every thread between the client and the old or the new coach
    /// gets a `link` record.
    func decideChange(requestID: String, approve: Bool, adminID: String, threadID: String, now: Int64,
                      completion: @escaping @Sendable (Result<LinkOutcome<ChangeRequestView>, any Error>) -> Void)
    /// Erases an account's personal data (`AccountStore.erase`) and, in the same transaction, gives each thread whose
    /// link ended (a client's with their coach) a `link` record. Throws `AccountStoreError` as `AccountStore.erase` does.
    func eraseAccount(userID: String, now: Int64,
                      completion: @escaping @Sendable (Result<LinkOutcome<AccountStore.Erasure>, any Error>) -> Void)
    /// Records when the user was last seen (unix seconds), in the background.
    func setLastSeen(userID: String, at: Int64)
    /// Blocking reads (never on the loop).
    func lastSeen(userIDs: [String]) throws -> [String: Int64]
    func threads(ids: [String]) throws -> (threads: [ThreadRow], names: [String: String])
}

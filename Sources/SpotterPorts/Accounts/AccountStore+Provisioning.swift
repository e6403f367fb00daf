
/// One coach and their provisioned clients, for load tests.
public struct ProvisionedCoach: Sendable, Equatable {
    public var coachID: String
    /// (client id, thread id) pairs.
    public var clients: [(clientID: String, threadID: String)]

    public static func == (lhs: ProvisionedCoach, rhs: ProvisionedCoach) -> Bool {
        lhs.coachID == rhs.coachID && lhs.clients.elementsEqual(rhs.clients) { $0 == $1 }
    }
}

extension AccountStore {
    /// Creates `coaches` coaches with `clientsPerCoach` linked clients each,
    /// their threads included, in one transaction. Every account gets the
    /// same password hash (hashing thousands of passwords would dominate a
    /// load test's setup). Emails are `load-<batch>-coach<i>@load.test` and
    /// `load-<batch>-client<i>-<j>@load.test`. `makeID` supplies fresh ids.
    public func provisionLoadAccounts(
        batch: String, coaches: Int, clientsPerCoach: Int, passwordHash: String, now: Int64,
        makeID: @escaping @Sendable () -> String
    ) throws -> [ProvisionedCoach] {
        try write({ db -> (coaches: [ProvisionedCoach], users: [UserRecord]) in
            // Statements are prepared once per connection (SQLite's statement cache, PostgreSQL's server side).
            let insertUser = """
                INSERT INTO "user" (id, role, fullName, email, passwordHash, createdAt, onboardingCompleted)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """
            let insertCoach = "INSERT INTO coach (userId) VALUES (?)"
            let insertLink = "INSERT INTO coachClientLink (clientId, coachId, createdAt) VALUES (?, ?, ?)"
            let insertThread = "INSERT INTO thread (id, coachId, clientId, createdAt) VALUES (?, ?, ?, ?)"
            var result: [ProvisionedCoach] = []
            result.reserveCapacity(coaches)
            for c in 0..<coaches {
                let coachID = makeID()
                try db.execute(insertUser, [coachID, "coach", "Load Coach \(c)", "load-\(batch)-coach\(c)@load.test", passwordHash, now, 0])
                try db.execute(insertCoach, [coachID])
                var clients: [(clientID: String, threadID: String)] = []
                for k in 0..<clientsPerCoach {
                    let clientID = makeID(), threadID = makeID()
                    try db.execute(insertUser, [
                        clientID, "client", "Load Client \(c)-\(k)", "load-\(batch)-client\(c)-\(k)@load.test", passwordHash, now, 1,
                    ])
                    try db.execute(insertLink, [clientID, coachID, now])
                    try db.execute(insertThread, [threadID, coachID, clientID, now])
                    clients.append((clientID, threadID))
                }
                result.append(ProvisionedCoach(coachID: coachID, clients: clients))
            }
            // The rows as stored (defaults included), for the directory.
            let ids = result.flatMap { [$0.coachID] + $0.clients.map(\.clientID) }
            return (result, try ids.compactMap { try Self.user(db, id: $0) })
        }, users: \.users).coaches
    }
}

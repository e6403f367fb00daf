/// What all of one account's sockets hold for their peers, bounded together by
/// `ServerConfig.maxAccountOutboundBytes`. Loop thread only.
///
/// Each socket's own bound (`maxOutboundBytes`) stops one slow reader; it does not stop one account that
/// opens many sockets and reads none, each holding just under it, plus what the kernel holds for each. So
/// when a socket of an account backs up (the kernel refused bytes, `TCPConnection.isBackedUp`), the account
/// is checked once before the loop polls (as Redis checks its clients in `beforeSleep`): the server's queues
/// and the kernel's send queues (SIOCOUTQ) of its open sockets are added up, and past the bound the sockets
/// that hold the most are closed with 1008 until the rest are under it. Sockets that never back up cost
/// nothing here.
final class OutboundLedger {
    private var socketsByAccount: [String: [UInt64: Connection]] = [:]
    private var backedUp: Set<String> = []
    let maxAccountBytes: Int

    init(maxAccountBytes: Int) {
        self.maxAccountBytes = maxAccountBytes
    }

    func add(_ connection: Connection, account: String) {
        connection.account = account
        socketsByAccount[account, default: [:]][connection.id] = connection
    }

    func remove(_ connection: Connection) {
        guard let account = connection.account else { return }
        socketsByAccount[account]?[connection.id] = nil
        if socketsByAccount[account]?.isEmpty == true { socketsByAccount[account] = nil }
    }

    /// A socket of `account` has a backlog: the account is checked before the next poll.
    func noteBacklog(_ account: String) { backedUp.insert(account) }

    /// Checks every account noted since the last call. Before each poll.
    func checkBackedUpAccounts() {
        guard !backedUp.isEmpty else { return }
        for account in backedUp {
            guard let sockets = socketsByAccount[account] else { continue }
            var held: [(connection: Connection, bytes: Int)] = []
            var total = 0
            for connection in sockets.values where connection.isWebSocket {
                let bytes = connection.heldOutboundBytes
                held.append((connection, bytes))
                total &+= bytes
            }
            guard total > maxAccountBytes else { continue }
            held.sort { $0.bytes > $1.bytes }
            for (connection, bytes) in held where total > maxAccountBytes {
                connection.closeSlowReader(accountTotal: total)
                total -= bytes
            }
        }
        backedUp.removeAll(keepingCapacity: true)
    }
}

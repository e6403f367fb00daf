import SpotterCore
import SpotterPorts
import SpotterProtocol
import WebSocket

/// An erased account, as the live state sees it: its sockets closed, its name forgotten, its directory row the
/// tombstone.
extension CoreRunner {
    /// Called on the loop once the account's erasure committed (before the ended links' records are applied, so
    /// their `thread` events already carry no name). Closes every socket of the user in this process with 4004
    /// (`SpotterCloseCode.accountErased`).
    func accountErased(_ erasure: AccountStore.Erasure) {
        core.setName(nil, for: erasure.userID)
        directory?.update(erasure.userID) { $0 = erasure.tombstone }
        closeSockets(of: erasure.userID)
    }

    /// Another process of the cluster erased the account (its `erasure` record came in order): the directory holds
    /// the tombstone and this process's sockets of the user close with 4004, as in the process that erased it.
    func erasedElsewhere(_ userID: String, at erasedAt: Int64) {
        directory?.update(userID) { user in
            (user.fullName, user.email, user.phone, user.avatar) = (nil, nil, nil, nil)
            user.erasedAt = user.erasedAt ?? erasedAt
        }
        closeSockets(of: userID)
    }

    private func closeSockets(of userID: String) {
        for case let socket as AppSocket in broker.localSubscribers(userID) {
            socket.connection?.close(CloseCode(SpotterCloseCode.accountErased), reason: "account erased")
        }
    }

    /// Whether `userID` is an erased account (a tombstone), from the directory (false when it is not there).
    func isErased(_ userID: String) -> Bool {
        directory?.user(id: userID)?.erasedAt != nil
    }
}

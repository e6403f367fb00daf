import SpotterBroker

/// Cluster-wide presence: a user is online while this process holds one of its sockets or a live process
/// reports one. `presenceChanged` fires on the loop exactly when that answer flips, whatever flipped it: a
/// local subscribe or unsubscribe, another process's announcement, its goodbye, or its silence.
extension NATSBroker {
    /// Whether `node` has reported `user` online here (tests).
    func remoteReports(node: String, user: String) -> Bool { remote.reports(node: node, user: user) }

    /// A local first subscriber arrived or the last left: others hear of it at the end of this loop iteration,
    /// with every other change of the iteration (a burst of sockets opening or closing is one message or a few).
    func localPresenceChanged(_ user: String, online: Bool, wasOnline: Bool) {
        unannounced[user] = online
        let isOnline = isOnline(user)
        if isOnline != wasOnline { presenceChanged?(user, isOnline) }
    }

    /// Once per loop iteration: the changes gathered since the last one. A user who came and went within one
    /// iteration is announced as it ends up; "offline" for a user the others never saw online changes nothing.
    func announceChanges() {
        guard !unannounced.isEmpty, !closed else { return }
        let changes = unannounced
        unannounced = [:]
        let online = changes.filter { $0.value }.map(\.key)
        let offline = changes.filter { !$0.value }.map(\.key)
        for message in PresenceMessage.changes(node: nodeID, online: online, offline: offline) { send(message) }
    }

    /// On start and on every reconnect: ask everyone for their full lists, and send ours.
    func announceEverything() {
        send(.hello(node: nodeID))
        announceFullList()
    }

    /// This process's full list, in parts. It carries every change not yet announced, so those are dropped.
    private func announceFullList() {
        unannounced = [:]
        for message in PresenceMessage.fullList(node: nodeID, users: subscribers.keys) { send(message) }
    }

    func receivedPresence(_ text: String) {
        guard let message = PresenceMessage(text: text) else {
            logger.warning("malformed presence message, dropped", metadata: ["message": "\(text.prefix(80))"])
            return
        }
        guard message.node != nodeID else { return }  // another process using our id: misconfigured, ignore
        switch message {
        case .hello:
            announceFullList()
        case .request(_, let target) where target == nodeID:
            announceFullList()
        default:
            break
        }
        let outcome = remote.apply(message, now: loop.nowMilliseconds)
        if outcome.needsList { send(.request(node: nodeID, target: message.node)) }
        remoteFlipped(outcome.flips)
    }

    /// Every heartbeat: beat, and forget the processes that fell silent.
    func tick() {
        send(.beat(node: nodeID))
        let (dead, flips) = remote.expire(now: loop.nowMilliseconds, deadAfter: deadAfterMilliseconds)
        for node in dead {
            logger.notice("a Spotter process fell silent; its users are offline", metadata: ["node": "\(node)"])
        }
        remoteFlipped(flips)
    }

    /// Remote answers that flipped: the cluster's answer flips with them unless a local socket holds the user.
    private func remoteFlipped(_ flips: [RemotePresence.Flip]) {
        for flip in flips where subscribers[flip.user] == nil {
            presenceChanged?(flip.user, flip.online)
        }
    }
}

/// Who the other processes say is online, and when each was last heard. Pure: the caller passes the time in
/// and turns the flips it gets back into `presenceChanged` (when the user has no local subscriber).
///
/// A user is remotely online while at least one live node reports it. A node is live from its first message
/// until its goodbye, or until nothing from it (a beat is enough) arrived for the dead-after time: a process
/// killed with kill -9 stops beating, and its users go offline everywhere.
struct RemotePresence {
    /// A user whose remote answer changed: online now, or not.
    struct Flip: Equatable {
        let user: String
        let online: Bool
    }

    private struct Node {
        var lastHeard: UInt64
        var users: Set<String> = []
    }

    private var nodes: [String: Node] = [:]
    /// How many live nodes report each user (absent: none).
    private var reporters: [String: Int] = [:]
    /// Full lists arriving in parts, by node, until the last part.
    private var partialLists: [String: Set<String>] = [:]

    func isOnline(_ user: String) -> Bool { reporters[user] != nil }

    func reports(node: String, user: String) -> Bool { nodes[node]?.users.contains(user) ?? false }

    /// What a message changed: users whose remote answer flipped, and whether the sender was unknown and its
    /// full list is not on its way (so ask it: `PresenceMessage.request`).
    struct Outcome: Equatable {
        var flips: [Flip] = []
        var needsList = false
    }

    /// Applies one message from another node. Any message but a goodbye is news that its sender is alive.
    mutating func apply(_ message: PresenceMessage, now: UInt64) -> Outcome {
        var outcome = Outcome()
        let node = message.node
        if case .goodbye = message {
            forget(node, &outcome.flips)
            return outcome
        }
        let known = nodes[node] != nil
        nodes[node, default: Node(lastHeard: now)].lastHeard = now
        switch message {
        case .goodbye, .beat, .request:
            // A node heard again after it was forgotten (a silence that was no disconnection): its list is
            // unknown here, and nothing else would bring it.
            outcome.needsList = !known
        case .hello:
            break  // its full list follows
        case .online(_, let users):
            outcome.needsList = !known
            for user in users where nodes[node]!.users.insert(user).inserted { count(user, +1, &outcome.flips) }
        case .offline(_, let users):
            outcome.needsList = !known
            for user in users where nodes[node]!.users.remove(user) != nil { count(user, -1, &outcome.flips) }
        case .fullList(_, let part, let parts, let users):
            if part == 1 { partialLists[node] = [] }
            guard partialLists[node] != nil else {
                // A later part without its first (heard mid-list): ask for a whole one.
                outcome.needsList = true
                return outcome
            }
            partialLists[node]!.formUnion(users)
            guard part == parts, let full = partialLists.removeValue(forKey: node) else { return outcome }
            let previous = nodes[node]!.users
            nodes[node]!.users = full
            for user in full.subtracting(previous) { count(user, +1, &outcome.flips) }
            for user in previous.subtracting(full) { count(user, -1, &outcome.flips) }
        }
        return outcome
    }

    /// Forgets the nodes unheard for more than `deadAfter` ms: returns them, and the users that went offline.
    mutating func expire(now: UInt64, deadAfter: UInt64) -> (dead: [String], flips: [Flip]) {
        let dead = nodes.filter { now &- $0.value.lastHeard > deadAfter }.map(\.key)
        var flips: [Flip] = []
        for node in dead { forget(node, &flips) }
        return (dead, flips)
    }

    private mutating func forget(_ node: String, _ flips: inout [Flip]) {
        partialLists[node] = nil
        guard let gone = nodes.removeValue(forKey: node) else { return }
        for user in gone.users { count(user, -1, &flips) }
    }

    private mutating func count(_ user: String, _ delta: Int, _ flips: inout [Flip]) {
        let before = reporters[user] ?? 0
        let after = before + delta
        reporters[user] = after > 0 ? after : nil
        if (before > 0) != (after > 0) { flips.append(Flip(user: user, online: after > 0)) }
    }
}

import SpotterCore

/// What the push consumer asks the loop about a batch of records: the threads, and whether each participant is
/// awake and how many messages they have unread, as the core stands now.
struct PushLoopFacts: Sendable {
    var threads: [Int64: PushThread] = [:]
    var awake: [String: Bool] = [:]
    var unread: [String: Int] = [:]
}

extension CoreRunner {
    /// The facts for records of threads `numbers` (loop thread). A thread this process does not know (in a cluster,
    /// one it has not read yet) is left out: its records make no push.
    func pushFacts(threadNumbers numbers: Set<Int64>) -> PushLoopFacts {
        var facts = PushLoopFacts()
        for number in numbers {
            guard let thread = chat.thread(no: number) else { continue }
            facts.threads[number] = PushThread(id: thread.id, coachID: thread.coachID, clientID: thread.clientID)
            for userID in [thread.coachID, thread.clientID] where facts.awake[userID] == nil {
                facts.awake[userID] = isAwake(userID)
                facts.unread[userID] = Int(clamping: chat.totalUnread(userID))
            }
        }
        return facts
    }

    /// Holds a socket here that is not in the background, or, holding none here, is online elsewhere in the cluster.
    /// (A person whose sockets here are all in the background counts as away even if another process has one.)
    func isAwake(_ userID: String) -> Bool {
        let local = broker.localSubscribers(userID).compactMap { $0 as? AppSocket }
        if local.isEmpty { return broker.isOnline(userID) }
        return local.contains { !$0.inBackground }
    }
}

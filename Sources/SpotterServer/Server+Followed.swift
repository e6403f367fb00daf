import Dispatch

extension Server {
    /// Cluster mode: the log position up to which this process's state holds every record, its own and the other
    /// processes'; nil off a cluster, or when the loop did not answer within `timeoutSeconds` (stopping). Any
    /// thread: it asks the loop and waits. The tests' cluster mode (`SPOTTER_TEST_CLUSTER`) waits until every node
    /// has followed to the same position before a new connection, as a client connecting a moment later would find.
    public func followedPosition(timeoutSeconds: Double = 5) -> Int64? {
        let done = DispatchSemaphore(value: 0)
        let answer = FollowedAnswer()
        loop.execute { [self] in
            answer.position = runner.follower?.appliedToState
            done.signal()
        }
        guard done.wait(timeout: .now() + timeoutSeconds) == .success else { return nil }
        return answer.position
    }
}

/// Written on the loop before the semaphore is signalled, read after the wait: the semaphore orders the two.
private final class FollowedAnswer: @unchecked Sendable {
    var position: Int64?
}

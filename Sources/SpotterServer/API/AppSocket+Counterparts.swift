import SpotterCore
import SpotterPorts

/// Cluster mode: the people a socket's commands are decided about are in the user directory before its hello.
///
/// The core reads a person (role, tier, zone, language) from the directory, which holds every user this process
/// read or wrote; a user who signed up on another process and never came here is a miss, and a miss reads as
/// "not a metered client": a coach's invite on a Freemium client's thread was then not held to the tier's 15
/// minutes, because the client's row was on another process only. So when a socket opens on a cluster, the other
/// participants of its threads that the directory lacks are read first (one read each, off the loop; kept by
/// `AccountStore.user(id:)`). A read that fails is not waited on again: the socket opens as before.
extension AppSocket {
    func withCounterpartsKnown(_ then: @escaping () -> Void) {
        let accounts = api.services.accounts
        guard runner.follower != nil, let directory = accounts.directory else { return then() }
        let me = actor.userID
        let missing = Set(runner.chat.threads(of: me).flatMap { [$0.coachID, $0.clientID] })
            .filter { $0 != me && directory.user(id: $0) == nil }
        guard !missing.isEmpty else { return then() }
        api.server.loop.runBlocking({ blockingResult { for id in missing { _ = try accounts.user(id: id) } } },
                                    then: { _ in then() })
    }
}

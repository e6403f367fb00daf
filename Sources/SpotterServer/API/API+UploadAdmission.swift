import SpotterCore
import SpotterProtocol
import WebSocket

/// An upload to a thread, admitted from its head when what it is decided on is not in memory yet: the thread (in a
/// cluster, linked on another process a moment ago) is read from the store first, as a download's is
/// (`afterReadingThread`), and the uploader's account when the directory does not hold it (signed up on another
/// process: without its row the uploader's tier is unknown and a client's upload would pass as unmetered). Only
/// then do the endpoint's checks run. Before, the head was decided from memory alone: `403` until the follower
/// brought the link, and a Freemium client's upload accepted. Nothing of the body is read meanwhile
/// (`Server.Route.decideUpload`); a token that does not verify is refused at once, without a read.
extension API {
    func admitUploadReadingThread(_ request: HTTPRequest, _ check: @escaping UploadCheck, _ head: Head) -> Server.Route {
        guard let threadID = head.parameters.first else { return admitUpload(request, check, head) }
        let actor: Actor
        do {
            actor = try authenticate(request)
        } catch {
            return .respond(.apiError(error, head.language))
        }
        let accounts = services.accounts
        let readsUser = accounts.directory != nil && accounts.directory?.user(id: actor.userID) == nil
        let readsThread = server.runner.mustReadThread(threadID)
        guard readsUser || readsThread else { return admitUpload(request, check, head) }
        return .decideUpload { [self] decide in
            let userID = actor.userID
            let thenThread = { [self] in
                guard readsThread else { return decide(admitUpload(request, check, head)) }
                server.runner.readThread(threadID) { [self] error in
                    if let error { return decide(.respond(.apiError(error, head.language))) }
                    decide(admitUpload(request, check, head))
                }
            }
            guard readsUser else { return thenThread() }
            // `user(id:)` keeps the row it read in the directory, where the tier check finds it.
            server.loop.runBlocking({ blockingResult { try accounts.user(id: userID) } }, then: { [head] result in
                if case .failure(let error) = result { return decide(.respond(.apiError(error, head.language))) }
                thenThread()
            })
        }
    }
}

import Foundation
import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// An admin's part in forgetting: a message taken down for moderation, and a purge on demand.
extension API {
    /// `DELETE /v1/admin/threads/{thread_id}/messages/{seq}`: the message becomes a tombstone, as its sender's
    /// delete makes it (`by: "admin"` in the participants' `message.deleted`).
    func adminDeleteMessage(_ threadID: String, _ seqText: String, _ actor: Actor, _ language: Language,
                            _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        guard let seq = Int64(seqText), WireRange.position.contains(seq) else { throw APIError(.outOfRange, field: "seq") }
        let request = MessageChangeRequest(actorID: actor.userID, threadID: threadID, seq: seq, text: nil, byAdmin: true)
        // A thread this process let go is brought up to date first (`CoreRunner+Interest`).
        let runner = server.runner
        runner.refresh(runner.chat.thread(id: threadID).map { [$0.no] } ?? []) { error in
            if let error { return respond(.apiError(error, language)) }
            runner.run(.changeMessage(request)) { result in
                switch result {
                case .success(let json): respond(HTTPResponse(status: 200, contentType: "application/json", body: json + "\n"))
                case .failure(let error): respond(.apiError(error, language))
                }
            }
        }
    }

    /// `POST /v1/admin/purge`: what was deleted leaves the disk now, and the answer comes when it has. The views
    /// that changed (a list's preview) are checkpointed first, and the purge runs after every write queued before it.
    func purgeNow(_ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        server.runner.checkpoint()
        let log = server.runner.log
        let purger: Purger = server.purger
        server.loop.runBlocking({
            blockingResult { () throws -> Purger.Report in
                // A read ordered after every write queued before it (the checkpoint above among them).
                let queued = DispatchSemaphore(value: 0)
                log.message(threadNo: 0, seq: 0) { _ in queued.signal() }
                queued.wait()
                return try purger.purge()
            }
        }, then: { result in
            switch result {
            case .success(let report):
                var json = JSONText()
                json.field("files_removed", Int64(report.filesRemoved))
                json.field("milliseconds", Int64(report.milliseconds))
                json.field("purged", true)
                json.field("vacuumed", Int64(report.disk.vacuumed.count))
                json.field("wal_truncated", report.disk.walTruncated)
                respond(HTTPResponse(status: 200, contentType: "application/json", body: json.finish() + "\n"))
            case .failure(let error):
                respond(.apiError(error, language))
            }
        })
    }
}

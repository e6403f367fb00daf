import SpotterCore
import SpotterProtocol
import SpotterPorts

/// Feedback from both sides after a video session (seed 002 "After Session": "Both can leave feedback").
///
/// Decisions (the seed says only that both can): each side rates the session 1–5 and may add notes, once, on a
/// session of theirs that is `completed`; feedback is not editable (what was said after the call stays as said).
/// The client's rating and notes are for the coach (and the client); the coach's are private notes, the coach's
/// alone: a client never receives them. Stored in the accounts store; nothing is pushed live (each side reads it
/// with `session.feedback.read` when it opens the session).
extension AppSocket {
    static func registerSessionFeedbackCommands(_ table: inout CommandTable) {
        table.on(SessionFeedbackCommand.self) { socket, body, id in socket.giveSessionFeedback(body, id: id) }
        table.on(SessionFeedbackReadCommand.self) { socket, body, id in socket.readSessionFeedback(body, id: id) }
    }

    /// The session and the asker's side, when the asker is its coach or its client; an outsider learns nothing
    /// (`session_not_found`, as for a session that does not exist).
    private func feedbackSession(_ sessionID: String?) throws(APIError) -> (Session, SessionActor) {
        guard let sessionID else { throw APIError(.missingField, field: "session_id") }
        guard let session = runner.core.sessions[sessionID], let side = session.actor(actor.userID) else {
            throw APIError(.sessionNotFound, field: "session_id")
        }
        return (session, side)
    }

    private func giveSessionFeedback(_ command: SessionFeedbackCommand, id: String) {
        let record: SessionFeedbackRecord
        do throws(APIError) {
            let (session, side) = try feedbackSession(command.sessionId)
            guard let rating = command.rating else { throw APIError(.missingField, field: "rating") }
            guard SessionFeedbackCommand.ratings.contains(rating) else { throw APIError(.outOfRange, field: "rating") }
            if let notes = command.notes {
                guard notes.count <= SessionFeedbackCommand.maxNotesCharacters else { throw APIError(.outOfRange, field: "notes") }
                guard SessionFeedbackCommand.notesAreClean(notes) else { throw APIError(.invalidMessage, field: "notes") }
            }
            guard session.status == .completed else { throw APIError(.sessionActionNotAllowed, field: "session_id") }
            let notes = command.notes.flatMap { $0.isEmpty ? nil : $0 }
            record = SessionFeedbackRecord(sessionId: session.id, side: side == .coach ? "coach" : "client",
                                           authorId: actor.userID, rating: Int(rating), notes: notes,
                                           createdAt: api.server.config.clock.now)
        } catch {
            return reply(id: id, error: error)
        }
        let accounts = api.services.accounts
        api.server.loop.runBlocking({ blockingResult { try accounts.addSessionFeedback(record) } }, then: { [self] result in
            answer(id: id, result.map { "{}" })
        })
    }

    private func readSessionFeedback(_ command: SessionFeedbackReadCommand, id: String) {
        let session: Session, side: SessionActor
        do throws(APIError) {
            (session, side) = try feedbackSession(command.sessionId)
        } catch {
            return reply(id: id, error: error)
        }
        let accounts = api.services.accounts
        let sessionID = session.id
        api.server.loop.runBlocking({ blockingResult { try accounts.sessionFeedback(sessionID: sessionID) } }, then: { [self] result in
            answer(id: id, result.map { rows in
                func entry(_ side: String) -> SessionFeedbackEntry? {
                    rows.first { $0.side == side }.map { SessionFeedbackEntry(rating: $0.rating, notes: $0.notes, createdAt: $0.createdAt) }
                }
                // The coach's notes and rating are the coach's alone.
                let view = SessionFeedbackView(sessionId: sessionID, client: entry("client"),
                                               coach: side == .coach ? entry("coach") : nil)
                return JSONText.encoder.encodeToString(view)
            })
        })
    }
}

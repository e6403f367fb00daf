import Foundation
import Testing
import TestSupport

/// Only the two participants of a session ever see it. In a conflict the coach asks client A to move A's session
/// so that client C's can take its hour; A's answer changes both sessions, and A's reply once carried C's session
/// (C's meeting link, purpose, client and thread), the last one the answer changed.
extension SessionsTests {
    @Test(arguments: ["accept", "decline"])
    func anAnswerToAskRescheduleCarriesOnlyTheAnswerersSession(_ answer: String) throws {
        let desk = try Desk()
        defer { desk.chat.server.stop() }
        let coach = try desk.chat.socket(desk.fixture.coachX.access)
        let clientA = try desk.chat.socket(desk.fixture.clientA.access)
        let day = 86_400
        let pair = try conflict(desk, coach, clientA, start: Self.now() + 4 * day)
        _ = try coach.result("session.act", ["session_id": pair.proposed, "action": "ask_reschedule", "start": Self.now() + 5 * day])
        var asked = try nextSession(clientA)
        while asked.session["id"] as? String != pair.existing || asked.session["status"] as? String != "reschedule_requested" {
            asked = try nextSession(clientA)
        }
        let reply = try clientA.result("session.act", ["session_id": pair.existing, "action": answer])
        #expect(reply["id"] as? String == pair.existing, "A's \(answer) answered with another session: \(reply)")
        #expect(reply["client_id"] as? String == desk.fixture.clientA.id)
        #expect(reply["thread_id"] as? String == desk.chat.thread)
        // Nothing of C's session reached A, in a reply or an event.
        for frame in clientA.events + clientA.drain(for: 0.3) {
            let session = frame["session"] as? [String: Any] ?? [:]
            #expect(session.isEmpty || session["client_id"] as? String == desk.fixture.clientA.id, "A saw: \(frame)")
        }
    }
}

import Foundation
import SpotterClient
import Testing
import TestSupport

/// SpotterClient against a live `spotter` over real sockets: chat both ways with ✓✓, typed errors in English and
/// Arabic, the HTTP calls.
@Suite("SpotterClient: chat", .serialized)
struct ClientChatTests {
    @Test func chatBothWaysWithReceiptsAndTypedErrors() async throws {
        let server = try LiveServer()
        defer { server.cleanup() }
        let (coach, client, thread) = try server.pair()
        let coachSide = server.client(coach)
        let clientSide = server.client(client)
        defer { Task { await coachSide.close(); await clientSide.close() } }
        let (coachHeard, clientHeard) = try await connectRecorded(coachSide, clientSide)

        // Client → coach, and the coach's ✓✓ back.
        let stored = try await clientSide.send(text: "مرحبا coach", to: thread)
        #expect(stored.seq == 1)
        #expect(stored.text == "مرحبا coach")
        try await eventually("the coach to get the message") { coachHeard.messages.count == 1 }
        #expect(coachHeard.messages[0].message.clientMessageId == stored.clientMessageId)
        #expect(coachHeard.messages[0].unread == 1)
        let read = try await coachSide.markRead(threadId: thread, seq: 1)
        #expect(read.unread == 0)
        try await eventually("the ✓✓ at the client") { clientHeard.receipts.contains { $0.readSeq == 1 } }

        // Coach → client, and the client's ✓✓ back.
        let answer = try await coachSide.send(text: "Welcome!", to: thread)
        #expect(answer.seq == 2)
        try await eventually("the client to get the answer") { clientHeard.messages.contains { $0.message.seq == 2 } }
        _ = try await clientSide.markRead(threadId: thread, seq: 2)
        try await eventually("the ✓✓ at the coach") { coachHeard.receipts.contains { $0.readSeq == 2 } }

        // The same client_message_id again is the same message, not a new one.
        let again = try await clientSide.send(text: "مرحبا coach", to: thread, clientMessageId: stored.clientMessageId)
        #expect(again.seq == 1)
        let history = try await clientSide.history(threadId: thread)
        #expect(history.messages.map(\.seq) == [2, 1])
        let threads = try await clientSide.threads()
        #expect(threads.threads.map(\.threadId) == [thread])

        // A video session: the coach invites, both hear the `session` event, the client's calendar lists it.
        let start = Int(Date().timeIntervalSince1970) + 86_400
        let invited = try await coachSide.command("session.invite", [
            "thread_id": .string(thread), "start": .int(start), "duration_minutes": 30, "purpose": "Form check",
        ], as: VideoSession.self)
        #expect(invited.status == "invited")
        try await eventually("the session event at the client") {
            clientHeard.all.contains { if case .session(let event) = $0 { event.session.id == invited.id } else { false } }
        }
        let calendar = try await clientSide.sessions(from: start - 3600, to: start + 3600)
        #expect(calendar.sessions.map(\.id) == [invited.id])
        #expect(calendar.nextCursor == nil)
        let badRange = await refusal { _ = try await clientSide.sessions(from: start, to: start - 1) }
        #expect(badRange?.code == "out_of_range")

        // Errors: a command, sends (which leave the outbox), HTTP.
        let unknown = await refusal { _ = try await clientSide.command("teleport") }
        #expect(unknown?.code == "unknown_command")
        #expect(unknown?.message.isEmpty == false)
        let long = await refusal { _ = try await clientSide.send(text: String(repeating: "x", count: 1001), to: thread) }
        #expect(long?.code == "message_too_long")
        #expect(long?.field == "text")
        let foreign = await refusal { _ = try await clientSide.send(text: "hi", to: "not-a-thread") }
        #expect(foreign?.code == "forbidden")
        let empty = await refusal { _ = try await clientSide.send(text: " \u{0}", to: thread) }
        #expect(empty?.code == "invalid_message")
        #expect(await clientSide.unacknowledged.isEmpty)
        let unknownField = await refusal { _ = try await clientSide.command("history", ["thread_id": .string(thread), "colour": "red"]) }
        #expect(unknownField?.code == "unknown_field")
        #expect(unknownField?.field == "colour")
        let huge = await refusal { _ = try await clientSide.history(threadId: thread, beforeSeq: Int64.max) }
        #expect(huge?.code == "out_of_range")
        let outsider = await refusal { _ = try await clientSide.api("GET", "/v1/clients/nobody/profile") }
        #expect(outsider?.code == "forbidden")
        #expect(outsider?.status == 403)
        #expect(try await clientSide.api("GET", "/v1/me", as: User.self).id == client.id)
        let wrong = await refusal { _ = try await SpotterHTTP(baseURL: server.url).signIn(email: "c0@a.client.test", password: "wrong-password") }
        #expect(wrong?.code == "invalid_credentials")
        #expect(wrong?.status == 401)
        // The socket survived every refusal.
        #expect(await clientSide.state == .live)
        #expect(clientHeard.disconnects.isEmpty)
    }

    @Test func errorsComeInArabicWhenAskedFor() async throws {
        let server = try LiveServer()
        defer { server.cleanup() }
        let (_, client, thread) = try server.pair()
        let side = server.client(client, language: "ar")
        defer { Task { await side.close() } }
        await side.connect()
        try await live(side)
        let arabic = { (text: String?) in text?.unicodeScalars.contains { (0x0600...0x06FF).contains($0.value) } == true }
        let unknown = await refusal { _ = try await side.command("teleport") }
        #expect(unknown?.code == "unknown_command")
        #expect(arabic(unknown?.message), "\(String(describing: unknown))")
        let long = await refusal { _ = try await side.send(text: String(repeating: "ب", count: 1001), to: thread) }
        #expect(long?.code == "message_too_long")
        #expect(arabic(long?.message))
        let http = await refusal { _ = try await SpotterHTTP(baseURL: server.url, language: "ar").signIn(email: "nobody@x.test", password: "secret1") }
        #expect(http?.code == "invalid_credentials")
        #expect(arabic(http?.message))
        // And in English without Accept-Language (the user's saved language is English).
        let english = server.client(client)
        defer { Task { await english.close() } }
        await english.connect()
        try await live(english)
        let plain = await refusal { _ = try await english.command("teleport") }
        #expect(plain?.code == "unknown_command")
        #expect(!arabic(plain?.message))
    }

    @Test func deviceRegistrationAndSignInOverHTTP() async throws {
        let server = try LiveServer()
        defer { server.cleanup() }
        let http = SpotterHTTP(baseURL: server.url)
        let made = try await http.signUp(role: "client", fullName: "Sara Ali", email: "sara@http.test", password: "secret1")
        let session = try await http.signIn(email: "sara@http.test", password: "secret1")
        #expect(session.user.id == made.user.id)
        #expect(session.tokenType == "Bearer")
        let rotated = try await http.refresh(refreshToken: session.refreshToken)
        #expect(rotated.refreshToken != session.refreshToken)
        let reused = await refusal { _ = try await http.refresh(refreshToken: session.refreshToken) }
        #expect(reused?.code == "refresh_token_reused")

        let fresh = try await http.signIn(email: "sara@http.test", password: "secret1")
        let token = String(repeating: "ab", count: 32)
        let device = try await http.registerDevice(.apns(token: token, topic: "com.example.coach", environment: "sandbox"), token: fresh.accessToken)
        #expect(device.platform == "apns")
        #expect(device.environment == "sandbox")
        let again = try await http.registerDevice(.apns(token: token.uppercased(), topic: "com.example.coach", environment: "sandbox"),
                                                  token: fresh.accessToken)
        #expect(again.id == device.id)
        let bad = await refusal { _ = try await http.registerDevice(.apns(token: "abc", topic: "com.example.coach", environment: "sandbox"), token: fresh.accessToken) }
        #expect(bad?.code == "invalid_device_token")
        #expect(bad?.status == 400)
        #expect(try await http.devices(token: fresh.accessToken).map(\.id) == [device.id])
        try await http.removeDevice(id: device.id, token: fresh.accessToken)
        #expect(try await http.devices(token: fresh.accessToken).isEmpty)
        let gone = await refusal { try await http.removeDevice(id: device.id, token: fresh.accessToken) }
        #expect(gone?.code == "not_found")
        let anonymous = await refusal { _ = try await http.devices(token: "not a token") }
        #expect(anonymous?.status == 401)
        try await http.signOut(refreshToken: fresh.refreshToken)
        let revoked = await refusal { _ = try await http.me(token: fresh.accessToken) }
        #expect(revoked?.code == "session_revoked")
    }
}

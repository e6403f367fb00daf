import Testing
@testable import SpotterNATS

/// The wire format and the remote presence bookkeeping, without a server.
@Suite("NATS wire and presence")
struct NATSWireTests {
    static let hostile = ["a.b", "a.*", "*", ">", "a.>", "a b", "a\tb", "a\nb", "", "=", "=61", "=zz", "é", "a/b", "日本"]

    @Test func aUserIDIsOneSubjectTokenWithoutWildcardsAndComesBack() {
        for id in Self.hostile + ["a", "A-b_9", "3f2c1e9a-7b1d-4c8e-9f00-0123456789ab"] {
            let subject = NATSWire.subject(userID: id)
            let token = subject.dropFirst("spotter.user.".count)
            #expect(subject.hasPrefix("spotter.user."))
            #expect(!token.isEmpty && token.allSatisfy { !".*> \t\n\r".contains($0) }, "\(id) → \(subject)")
            #expect(NATSWire.userID(subject: subject) == id, "\(id) → \(subject)")
        }
        // Plain ids are themselves (readable in NATS's monitoring); an id spelled like an encoding stays apart.
        #expect(NATSWire.subject(userID: "A-b_9") == "spotter.user.A-b_9")
        #expect(NATSWire.subject(userID: "=61") != NATSWire.subject(userID: "a"))
        #expect(NATSWire.subject(userID: "a.b") == "spotter.user.=612e62")
        let all = (Self.hostile + ["a", "b", "ab"]).map { NATSWire.subject(userID: $0) }
        #expect(Set(all).count == all.count)
    }

    @Test func onlyTokensThatTokenWritesAreRead() {
        for token in ["=6", "=zz", "=61", "=ABCD", "a.b", "*", "", "=ff"] {
            #expect(NATSWire.userID(token: Substring(token)) == nil, "\(token)")
        }
        #expect(NATSWire.userID(subject: "spotter.presence") == nil)
        #expect(NATSWire.userID(subject: "spotter.user.") == nil)
    }

    @Test func userEventsRoundTripAndOddPayloadsAreRefused() {
        let events: [UserEvent] = [
            .logged(cursor: 1, frame: #"{"a": "b c"}"#), .logged(cursor: Int64.max, frame: ""),
            .logged(cursor: 42, frame: "line\nbreak L1 E "), .ephemeral(frame: ""), .ephemeral(frame: " lead"),
        ]
        for event in events { #expect(UserEvent(payload: event.payload) == event) }
        for payload in ["", "L", "E", "L1", "Lx y", "L 1", "L1.5 x", "E1 x", "e x", "X x", "L18446744073709551616 x"] {
            #expect(UserEvent(payload: payload) == nil, "\(payload)")
        }
    }

    @Test func presenceMessagesRoundTripAndMalformedOnesAreRefusedWhole() {
        let messages: [PresenceMessage] = [
            .beat(node: "n1"), .hello(node: "n1"), .goodbye(node: "n1"), .request(node: "n1", target: "n2"),
            .online(node: "n1", users: ["a", "a.b", ""]), .offline(node: "n1", users: ["x"]),
            .fullList(node: "n1", part: 2, parts: 3, users: ["u", "v w"]), .fullList(node: "n1", part: 1, parts: 1, users: []),
        ]
        for message in messages { #expect(PresenceMessage(text: message.text) == message, "\(message.text)") }
        let malformed = [
            "", "B", "B n x", "H n x", "G", "X n", "b n", "B n.1", "B *", "U n =zz", "U n a.b", "D n  a", "S n",
            "S n 1", "S n 0/1", "S n 2/1", "S n 1/x a", "S n 1/1/1", "R n", "R n a.b", "R n a b",
        ]
        for text in malformed { #expect(PresenceMessage(text: text) == nil, "\(text)") }
    }

    @Test func bigListsAreCutInPartsBelowTheLimit() {
        let users = (0..<5000).map { "user-\($0)-with-a-longish-id" }
        let parts = PresenceMessage.fullList(node: "n", users: users, maxBytes: 10_000)
        #expect(parts.count > 10)
        #expect(parts.allSatisfy { $0.text.utf8.count <= 10_000 })
        var seen: [String] = []
        for (index, part) in parts.enumerated() {
            guard case .fullList(_, let number, let total, let listed) = part else { Issue.record("\(part)"); continue }
            #expect(number == index + 1 && total == parts.count)
            seen += listed
        }
        #expect(seen == users)
        #expect(PresenceMessage.fullList(node: "n", users: []) == [.fullList(node: "n", part: 1, parts: 1, users: [])])

        let changes = PresenceMessage.changes(node: "n", online: users, offline: ["gone"], maxBytes: 10_000)
        #expect(changes.count == parts.count + 1 && changes.allSatisfy { $0.text.utf8.count <= 10_000 })
        #expect(changes.last == .offline(node: "n", users: ["gone"]))
        #expect(PresenceMessage.changes(node: "n", online: [], offline: []).isEmpty)
    }

    // MARK: - Remote presence

    typealias Flip = RemotePresence.Flip

    @Test func usersAreOnlineWhileOneLiveNodeReportsThem() {
        var remote = RemotePresence()
        #expect(remote.apply(.online(node: "a", users: ["u"]), now: 0).flips == [Flip(user: "u", online: true)])
        #expect(remote.apply(.online(node: "b", users: ["u"]), now: 0).flips == [])
        #expect(remote.apply(.online(node: "a", users: ["u"]), now: 0).flips == [])  // told twice: still one
        #expect(remote.apply(.offline(node: "a", users: ["u"]), now: 0).flips == [])
        #expect(remote.isOnline("u"))
        #expect(remote.apply(.goodbye(node: "b"), now: 0).flips == [Flip(user: "u", online: false)])
        #expect(!remote.isOnline("u"))
        #expect(remote.apply(.offline(node: "a", users: ["never"]), now: 0).flips == [])
    }

    @Test func aFullListIsSwappedInWholeWithoutFlicker() {
        var remote = RemotePresence()
        _ = remote.apply(.online(node: "a", users: ["stays", "goes"]), now: 0)
        #expect(remote.apply(.fullList(node: "a", part: 1, parts: 2, users: ["stays"]), now: 0).flips == [])
        #expect(remote.isOnline("goes"))  // nothing changes until the last part
        let last = remote.apply(.fullList(node: "a", part: 2, parts: 2, users: ["new"]), now: 0).flips
        #expect(Set(last.map(\.user)) == ["goes", "new"] && last.contains(Flip(user: "goes", online: false)))
        #expect(remote.isOnline("stays") && remote.isOnline("new") && !remote.isOnline("goes"))
    }

    @Test func aSilentNodeIsForgottenAfterTheDeadAfterTimeAndAskedForItsListWhenHeardAgain() {
        var remote = RemotePresence()
        #expect(remote.apply(.hello(node: "a"), now: 0).needsList == false)
        _ = remote.apply(.fullList(node: "a", part: 1, parts: 1, users: ["u"]), now: 0)
        _ = remote.apply(.beat(node: "a"), now: 400)
        #expect(remote.expire(now: 900, deadAfter: 500).dead.isEmpty)  // 500 ms since the beat: not yet
        let expired = remote.expire(now: 901, deadAfter: 500)
        #expect(expired.dead == ["a"] && expired.flips == [Flip(user: "u", online: false)])
        // It was silent, not gone (a partition that healed): its next beat is answered with a request.
        let heard = remote.apply(.beat(node: "a"), now: 1000)
        #expect(heard.needsList && heard.flips.isEmpty && !remote.isOnline("u"))
        #expect(remote.apply(.beat(node: "a"), now: 1100).needsList == false)
        #expect(remote.apply(.fullList(node: "a", part: 1, parts: 1, users: ["u"]), now: 1200).flips == [Flip(user: "u", online: true)])
        // A later part without its first (heard mid-list) asks too.
        #expect(remote.apply(.fullList(node: "b", part: 2, parts: 2, users: ["v"]), now: 1200).needsList)
        #expect(!remote.isOnline("v"))
    }
}

extension NATSWireTests {
    @Test func aServerURLIsLoggedWithoutItsCredentials() {
        #expect(NATSWire.loggable(url: "nats://spotter:s3cr@t@10.0.0.5:4222") == "nats://10.0.0.5:4222")
        #expect(NATSWire.loggable(url: "tls://token@nats.internal:4443") == "tls://nats.internal:4443")
        #expect(NATSWire.loggable(url: "nats://127.0.0.1:4222") == "nats://127.0.0.1:4222")
    }
}

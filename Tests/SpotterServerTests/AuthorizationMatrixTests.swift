import Foundation
import Testing
import TestSupport

/// Every endpoint and socket command, for every role and relationship:
/// allowed means the request got past authorization (any status but 401/403),
/// denied means exactly 403 (401 for no token at all).
@Suite("Authorization matrix", .serialized)
struct AuthorizationMatrixTests {
    enum Who: String, CaseIterable {
        case anonymous, clientA, clientB, clientC, coachX, coachY, admin
    }

    struct Case {
        var method: String
        var path: (CoachingFixture) -> String
        var body: [String: Any]?
        var allowed: Set<Who>
        var name: String
    }

    static let authenticated: Set<Who> = Set(Who.allCases).subtracting([.anonymous])
    static let clients: Set<Who> = [.clientA, .clientB, .clientC]

    static func cases() -> [Case] {
        [
            Case(method: "GET", path: { _ in "/v1/me" }, allowed: authenticated, name: "own account"),
            Case(method: "PUT", path: { _ in "/v1/me/language" }, body: ["language": "en"], allowed: authenticated, name: "language"),
            Case(method: "POST", path: { _ in "/v1/me/devices" }, body: ["platform": "fcm", "token": "matrix"], allowed: authenticated,
                 name: "register a device"),
            Case(method: "GET", path: { _ in "/v1/me/devices" }, allowed: authenticated, name: "own devices"),
            Case(method: "DELETE", path: { _ in "/v1/me/devices/no-such-device" }, allowed: authenticated, name: "remove a device"),
            Case(method: "GET", path: { _ in "/v1/me/notifications" }, allowed: authenticated, name: "notification settings"),
            Case(method: "GET", path: { _ in "/v1/me/export" }, allowed: authenticated, name: "own export"),
            Case(method: "PUT", path: { _ in "/v1/me/notifications" }, body: ["reminders": true], allowed: authenticated,
                 name: "change notification settings"),
            Case(method: "GET", path: { _ in "/v1/me/availability" }, allowed: [.coachX, .coachY], name: "own availability"),
            Case(method: "PUT", path: { _ in "/v1/me/availability" }, body: ["time_zone": "UTC"], allowed: [.coachX, .coachY],
                 name: "set availability"),
            Case(method: "PUT", path: { _ in "/v1/me/onboarding" }, body: ["gender": "female"], allowed: clients, name: "onboarding"),
            Case(method: "GET", path: { _ in "/v1/coaches" }, allowed: authenticated, name: "list coaches"),
            Case(method: "GET", path: { _ in "/v1/me/coach" }, allowed: clients, name: "own coach"),
            Case(method: "POST", path: { _ in "/v1/me/coach" }, body: ["coach_id": "no-such-coach"], allowed: clients, name: "pick coach"),
            Case(method: "POST", path: { _ in "/v1/me/coach-change-requests" }, body: ["coach_id": "no-such-coach"],
                 allowed: clients, name: "request coach change"),
            Case(method: "GET", path: { _ in "/v1/coach/clients" }, allowed: [.coachX, .coachY], name: "coach's clients"),
            Case(method: "GET", path: { _ in "/v1/admin/coach-change-requests" }, allowed: [.admin], name: "list change requests"),
            Case(method: "GET", path: { _ in "/v1/admin/users" }, allowed: [.admin], name: "list users"),
            Case(method: "DELETE", path: { _ in "/v1/admin/users/no-such-user" }, allowed: [.admin], name: "erase an account"),
            Case(method: "POST", path: { _ in "/v1/admin/coach-change-requests/no-such-request/approve" }, allowed: [.admin],
                 name: "approve change"),
            Case(method: "POST", path: { _ in "/v1/admin/coach-change-requests/no-such-request/reject" }, allowed: [.admin],
                 name: "reject change"),
            Case(method: "POST", path: { _ in "/v1/admin/provision" }, body: ["coaches": 0], allowed: [.admin], name: "provision load accounts"),
            Case(method: "GET", path: { "/v1/clients/\($0.clientA.id)/profile" }, allowed: [.clientA, .coachX, .admin],
                 name: "client A's profile"),
            Case(method: "GET", path: { "/v1/clients/\($0.clientB.id)/profile" }, allowed: [.clientB, .coachY, .admin],
                 name: "client B's profile"),
            Case(method: "GET", path: { "/v1/clients/\($0.clientC.id)/profile" }, allowed: [.clientC, .admin],
                 name: "client C's profile (no coach)"),
        ]
    }

    func token(_ who: Who, _ fixture: CoachingFixture) -> String? {
        switch who {
        case .anonymous: return nil
        case .clientA: return fixture.clientA.access
        case .clientB: return fixture.clientB.access
        case .clientC: return fixture.clientC.access
        case .coachX: return fixture.coachX.access
        case .coachY: return fixture.coachY.access
        case .admin: return fixture.admin.access
        }
    }

    @Test func everyEndpointForEveryRoleAndRelationship() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        var checked = 0
        for entry in Self.cases() {
            for who in Who.allCases {
                let response = try fixture.api.call(entry.method, entry.path(fixture), entry.body, token: token(who, fixture))
                let denied = response.status == 401 || response.status == 403
                if entry.allowed.contains(who) {
                    #expect(!denied, "\(entry.name) as \(who): expected allowed, got \(response.status) \(response.text)")
                } else if who == .anonymous {
                    #expect(response.status == 401, "\(entry.name) anonymously: got \(response.status)")
                } else {
                    #expect(response.status == 403, "\(entry.name) as \(who): expected 403, got \(response.status) \(response.text)")
                    #expect(response.errorCode == "forbidden")
                }
                checked += 1
            }
        }
        #expect(checked == Self.cases().count * Who.allCases.count)
    }

    @Test func liveSocketAndItsCommandsNeedAToken() throws {
        let fixture = try CoachingFixture()
        defer { fixture.server.stop() }
        #expect(throws: BlockingSocket.Failure.self) { try WebSocketTestClient(port: fixture.server.port, path: "/v1/ws") }
        for who in Who.allCases where who != .anonymous {
            let socket = try WebSocketTestClient(port: fixture.server.port, path: "/v1/ws", headers: [("Authorization", "Bearer \(token(who, fixture)!)")])
            let hello = try socket.nextJSON()
            #expect(hello["type"] as? String == "hello")
            socket.send(text: #"{"id":"1","type":"me"}"#)
            let reply = try socket.nextJSON()
            #expect(reply["ok"] as? Bool == true, "me as \(who)")
        }
    }
}

import Foundation
import SpotterCore
import SpotterServer
import SpotterPorts
import TestSupport

/// Two coaches, three clients and an admin, signed in, on one test server:
/// client A is onboarded and linked to coach X, client B linked to coach Y,
/// client C has no coach yet.
struct CoachingFixture {
    let server: TestServer
    let api: APIClient
    let coachX, coachY, clientA, clientB, clientC, admin: (access: String, refresh: String, id: String)

    init(_ configure: (inout ServerConfig) -> Void = { _ in }) throws {
        server = try TestServer(configure)
        api = APIClient(port: server.port)
        coachX = try api.signUp(role: "coach", name: "Xavier Coach", email: "x@coach.test")
        coachY = try api.signUp(role: "coach", name: "Yara Coach", email: "y@coach.test")
        clientA = try api.signUp(role: "client", name: "Amal Client", email: "a@client.test")
        clientB = try api.signUp(role: "client", name: "Badr Client", email: "b@client.test")
        clientC = try api.signUp(role: "client", name: "Chadi Client", email: "c@client.test")
        let adminID = SecureRandom.uuid()
        _ = try server.accounts.createUser(
            id: adminID, role: "admin", fullName: "Admin", email: "admin@spotter.test", phone: nil,
            passwordHash: PasswordHasher(logN: 10).hash("adminpass"), now: 0)
        let signedIn = try api.call("POST", "/v1/auth/signin", ["email": "admin@spotter.test", "password": "adminpass"])
        admin = (signedIn.string("access_token")!, signedIn.string("refresh_token")!, adminID)

        try expect(api.call("PUT", "/v1/me/onboarding", Self.onboarding, token: clientA.access), 200)
        try expect(api.call("POST", "/v1/me/coach", ["coach_id": coachX.id], token: clientA.access), 201)
        try expect(api.call("POST", "/v1/me/coach", ["coach_id": coachY.id], token: clientB.access), 201)
    }

    /// A coach and an onboarded client linked on `server` (a server of its own, e.g. one that restarts).
    static func linkedPair(on server: TestServer) throws
        -> (coach: (access: String, refresh: String, id: String), client: (access: String, refresh: String, id: String), thread: String) {
        let api = APIClient(port: server.port)
        let coach = try api.signUp(role: "coach", name: "Carter", email: "c@x.test")
        let client = try api.signUp(role: "client", name: "Sara", email: "s@x.test")
        _ = try api.call("PUT", "/v1/me/onboarding", onboarding, token: client.access)
        _ = try api.call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access)
        guard let thread = try api.call("GET", "/v1/me/coach", token: client.access).string("thread_id") else {
            throw BlockingSocket.Failure(description: "no thread after linking")
        }
        return (coach, client, thread)
    }

    nonisolated(unsafe) static let onboarding: [String: Any] = [
        "date_of_birth": "1995-06-15", "gender": "female", "height_cm": 165, "weight_kg": 70.5,
        "goal": "Lose 10kg", "experience_level": "beginner",
        "dietary_restrictions": ["Vegetarian"], "medical_conditions": [],
    ]

    private func expect(_ response: APIResponse, _ status: Int) throws {
        guard response.status == status else {
            throw BlockingSocket.Failure(description: "fixture: expected \(status), got \(response.status) \(response.text)")
        }
    }
}

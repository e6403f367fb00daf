import Foundation
import Testing
import TestSupport

/// What an admin's console lists: users (by role, a page at a time) and coach change requests with names.
@Suite("Admin lists")
struct AdminListTests {
    @Test func usersArePagedNewestFirstAndFilteredByRole() throws {
        let f = try CoachingFixture()
        defer { f.server.stop() }
        let all = try f.api.call("GET", "/v1/admin/users", token: f.admin.access)
        #expect(all.status == 200)
        let users = try #require(all["users"] as? [[String: Any]])
        // Two coaches, three clients and the admin.
        #expect(all["total"] as? Int == 6 && users.count == 6)
        let keys = users.map { ($0["id"] as? String ?? "") }
        #expect(Set(keys) == Set([f.coachX.id, f.coachY.id, f.clientA.id, f.clientB.id, f.clientC.id, f.admin.id]))
        #expect(users.first { $0["id"] as? String == f.clientA.id }?["full_name"] as? String == "Amal Client")

        let coaches = try f.api.call("GET", "/v1/admin/users?role=coach", token: f.admin.access)
        #expect(coaches["total"] as? Int == 2)
        #expect((coaches["users"] as? [[String: Any]])?.map { $0["role"] as? String } == ["coach", "coach"])

        // Pages: limit and offset walk the same order with nothing repeated or skipped.
        var paged: [String] = []
        for offset in stride(from: 0, to: 6, by: 4) {
            let page = try f.api.call("GET", "/v1/admin/users?limit=4&offset=\(offset)", token: f.admin.access)
            #expect(page["total"] as? Int == 6)
            paged += (page["users"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        }
        #expect(paged == keys)
        #expect((try f.api.call("GET", "/v1/admin/users?offset=6", token: f.admin.access)["users"] as? [Any])?.isEmpty == true)
    }

    @Test func badPagingIsATypedErrorNamingTheField() throws {
        let f = try CoachingFixture()
        defer { f.server.stop() }
        for (query, code, field) in [("role=owner", "bad_request", "role"), ("limit=0", "out_of_range", "limit"),
                                     ("limit=201", "out_of_range", "limit"), ("limit=ten", "out_of_range", "limit"),
                                     ("offset=-1", "out_of_range", "offset")] {
            let reply = try f.api.call("GET", "/v1/admin/users?\(query)", token: f.admin.access)
            #expect(reply.status == 400 && reply.errorCode == code && reply.errorField == field, "\(query)")
        }
        #expect(try f.api.call("GET", "/v1/admin/users", token: f.coachX.access).status == 403)
        #expect(try f.api.call("GET", "/v1/admin/users", token: f.clientA.access).status == 403)
        #expect(try f.api.call("GET", "/v1/admin/users").status == 401)
    }

    @Test func changeRequestsNameThePeople() throws {
        let f = try CoachingFixture()
        defer { f.server.stop() }
        let made = try f.api.call("POST", "/v1/me/coach-change-requests", ["coach_id": f.coachY.id, "reason": "closer"],
                                  token: f.clientA.access)
        #expect(made.status == 201)
        let list = try f.api.call("GET", "/v1/admin/coach-change-requests?status=pending", token: f.admin.access)
        let request = try #require(list.array.first)
        #expect(request["client_name"] as? String == "Amal Client")
        #expect(request["from_coach_name"] as? String == "Xavier Coach")
        #expect(request["to_coach_name"] as? String == "Yara Coach")
        // The client's own answer is the request without the admin's names.
        #expect(made["client_name"] == nil)
    }
}

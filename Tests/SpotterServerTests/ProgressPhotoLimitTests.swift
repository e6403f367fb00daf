import Foundation
import Testing
import SpotterServer
import TestSupport

/// Seed 001 "Monetization": the Free tier keeps 5 progress photos, the paid tiers unlimited (issue 30 item 9), over
/// real sockets: photos uploaded as Smart Premium, then a downgrade to Freemium.
@Suite("Progress photos: Freemium keeps 5", .serialized)
struct ProgressPhotoLimitTests {
    @Test func theSixthPhotoOfAFreemiumClientIsRefusedAndPaidTiersAreUnlimited() throws {
        let chat = try ChatFixture { $0.tiers = true }
        defer { chat.server.stop() }
        let fixture = chat.fixture
        func tier(_ name: String) throws {
            #expect(try fixture.api.call("PUT", "/v1/admin/users/\(fixture.clientA.id)/tier", ["tier": name], token: fixture.admin.access).status == 200)
        }
        try tier("smart_premium")  // uploads are Smart Premium's
        let photos = try (0..<3).map { n in
            try #require(AttachmentsTests.json(try AttachmentsTests.upload(
                chat.server, chat.thread, fixture.clientA.access, AttachmentsTests.png + Array("photo \(n) \(UUID())".utf8)))["id"] as? String)
        }
        let client = try chat.socket(fixture.clientA.access, headers: [("Accept-Language", "ar")])
        func checkIn(_ set: [String: String]?) throws -> [String: Any] {
            var command: [String: Any] = ["thread_id": chat.thread, "weight": 80, "unit": "kg"]
            if let set { command["photos"] = set }
            return try client.command("check_in.submit", command)
        }
        #expect(try checkIn(["front": photos[0], "side": photos[1], "back": photos[2]])["ok"] as? Bool == true)
        #expect(try checkIn(["front": photos[0]])["ok"] as? Bool == true)  // 4 kept
        try tier("freemium")
        #expect(try checkIn(["side": photos[1]])["ok"] as? Bool == true)  // the 5th: still within
        let refused = try checkIn(["back": photos[2]])
        let error = try #require(refused["error"] as? [String: Any])
        #expect(error["code"] as? String == "plan_upgrade_required" && error["field"] as? String == "photos")
        #expect(error["upgrade_to"] as? String == "premium")
        #expect((error["message"] as? String)?.contains("5") == true
                && (error["message"] as? String)?.unicodeScalars.contains { (0x0621...0x064A).contains($0.value) } == true)
        // Two at once past the limit are refused whole; a check-in without photos still goes in.
        #expect(errorCode(try checkIn(["front": photos[0], "side": photos[1]])) == "plan_upgrade_required")
        #expect(try checkIn(nil)["ok"] as? Bool == true)
        // Premium keeps any number.
        try tier("premium")
        #expect(try checkIn(["front": photos[0], "side": photos[1], "back": photos[2]])["ok"] as? Bool == true)
    }
}

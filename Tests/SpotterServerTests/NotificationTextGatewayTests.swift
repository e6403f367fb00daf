import Foundation
import Testing
import SpotterCore
import SpotterServer
import SpotterSMS
import TestSupport

/// The HTTP gateway sender carrying a notification text (a session reminder) to a local fake gateway: what it posts,
/// that a 4xx is a refusal for good and anything else an error to retry.
@Suite("Notification texts through the gateway", .serialized)
struct NotificationTextGatewayTests {
    static let text = NotificationText(id: "pos:42:user-1", channel: .sms, to: "+966551234567", subject: "⏰ تبدأ الجلسة قريبًا",
                                       text: "⏰ تبدأ الجلسة قريبًا\nالثلاثاء، 20 يناير الساعة 12:00 م", kind: "session_reminder")

    @Test func postsTheTextWithItsID() throws {
        let gateway = try FakeGateway(status: 202)
        defer { gateway.close() }
        let sender = HTTPOTPSender(url: URL(string: "http://127.0.0.1:\(gateway.port)/v1/sms")!, token: "gw-secret")
        try sender.send(Self.text)
        try sender.send(Self.text)  // a repeat (after a crash): the same body, the same id, for the gateway to drop
        let requests = gateway.requests
        #expect(requests.count == 2)
        let request = try #require(requests.first)
        #expect(request.requestLine == "POST /v1/sms HTTP/1.1" && request.headers["authorization"] == "Bearer gw-secret")
        #expect(request.body == ["id": "pos:42:user-1", "kind": "session_reminder", "subject": Self.text.subject,
                                 "text": Self.text.text, "to": "+966551234567"], "\(request.body)")
        #expect(requests[1].body == request.body)
    }

    @Test func aClientErrorIsARefusalForGoodAnythingElseIsRetried() throws {
        for (status, refused) in [(400, true), (422, true), (404, true), (408, false), (429, false), (500, false), (503, false)] {
            let gateway = try FakeGateway(status: status)
            defer { gateway.close() }
            let sender = HTTPOTPSender(url: URL(string: "http://127.0.0.1:\(gateway.port)/sms")!, token: nil)
            if refused {
                #expect(throws: NotificationTextFailure.refused(status: status)) { try sender.send(Self.text) }
            } else {
                #expect(throws: HTTPOTPSender.Failure.status(status)) { try sender.send(Self.text) }
            }
        }
    }
}

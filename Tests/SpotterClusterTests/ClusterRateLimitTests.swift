import Foundation
import Testing
import TestSupport

/// The limits that protect accounts hold across the processes of a cluster (issue 31 item 5): counted in
/// PostgreSQL, so attempts spread over three processes behind a balancer are refused after the limit counted over
/// all three — not after three times it, as three in-memory limiters would allow. Real binaries, loopback only.
@Suite("Cluster: rate limits shared by every process", .serialized)
struct ClusterRateLimitTests {
    static func signIn(_ port: Int, _ email: String, _ password: String) throws -> APIResponse {
        try APIClient(port: port).call("POST", "/v1/auth/signin", ["email": email, "password": password])
    }

    @Test func wrongPasswordsSpreadOverThreeProcessesLockTheAccountOnAllOfThem() throws {
        let cluster = try ClusterFixture(processes: 3)
        defer { cluster.stop() }
        _ = try APIClient(port: cluster.port(0)).signUp(role: "client", name: "Victim", email: "victim@limits.test")
        // Five wrong guesses, round robin: processes 0, 1, 2, 0, 1 — none of them saw more than two.
        for guess in 0..<5 {
            let answer = try Self.signIn(cluster.port(guess % 3), "victim@limits.test", "guess\(guess)!")
            #expect(answer.status == 401 && answer.errorCode == "invalid_credentials", "guess \(guess): \(answer.text)")
        }
        // The sixth is refused wherever it lands, the right password too, with the wait of the first guess's window.
        for index in [2, 0, 1] {
            let locked = try Self.signIn(cluster.port(index), "victim@limits.test", "secret1")
            #expect(locked.status == 429 && locked.errorCode == "rate_limited", "process \(index): \(locked.text)")
            let wait = Int(locked.headers["Retry-After"] ?? "") ?? 0
            #expect((800...900).contains(wait), "Retry-After \(wait): the first guess's 15 minutes, less the time since")
        }
        // Another account from the same address is not locked (the address's limit is 30 per 15 minutes).
        _ = try APIClient(port: cluster.port(1)).signUp(role: "client", name: "Other", email: "other@limits.test")
        #expect(try Self.signIn(cluster.port(2), "other@limits.test", "secret1").status == 200)
    }

    @Test func signUpsAndPhoneCodeRequestsPerAddressCountOverThreeProcesses() throws {
        let cluster = try ClusterFixture(processes: 3, options: ["--signups-per-hour", "3"])
        defer { cluster.stop() }
        for index in 0..<3 {
            _ = try APIClient(port: cluster.port(index)).signUp(role: "client", name: "C\(index)", email: "c\(index)@signups.test")
        }
        for index in 0..<3 {
            let refused = try APIClient(port: cluster.port(index)).call("POST", "/v1/auth/signup", [
                "role": "client", "full_name": "Late", "email": "late\(index)@signups.test",
                "password": "secret1", "password_confirmation": "secret1"])
            #expect(refused.status == 429 && refused.errorCode == "rate_limited", "process \(index): \(refused.text)")
        }

        // Ten code requests an hour per address (each may send an SMS), over the three processes.
        for request in 0..<10 {
            let phone = "05512340" + String(format: "%02d", request)
            let sent = try APIClient(port: cluster.port(request % 3)).call("POST", "/v1/auth/otp/request", ["phone": phone])
            #expect(sent.status == 202, "request \(request): \(sent.text)")
        }
        let refused = try APIClient(port: cluster.port(2)).call("POST", "/v1/auth/otp/request", ["phone": "0551234099"])
        #expect(refused.status == 429 && refused.errorCode == "rate_limited", "\(refused.text)")
    }
}

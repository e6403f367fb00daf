import Foundation

/// A JSON answer from the HTTP API.
public struct APIResponse {
    public var status: Int
    public var headers: [String: String]
    public var json: [String: Any]
    public var array: [[String: Any]]
    public var text: String

    /// `error.code` of an error body.
    public var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
    public var errorMessage: String? { (json["error"] as? [String: Any])?["message"] as? String }
    public var errorField: String? { (json["error"] as? [String: Any])?["field"] as? String }
    public subscript(key: String) -> Any? { json[key] }
    public func string(_ key: String) -> String? { json[key] as? String }
    public func object(_ key: String) -> [String: Any]? { json[key] as? [String: Any] }
}

/// Calls the JSON API of a test server, one connection per call.
public struct APIClient: Sendable {
    public let port: Int
    public init(port: Int) { self.port = port }

    @discardableResult
    public func call(
        _ method: String, _ path: String, _ body: [String: Any]? = nil, token: String? = nil,
        headers: [(String, String)] = []
    ) throws -> APIResponse {
        var all = headers
        if let token { all.append(("Authorization", "Bearer \(token)")) }
        var text = ""
        if let body {
            text = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
            all.append(("Content-Type", "application/json"))
        }
        let client = try HTTPTestClient(port: port)
        let response = try client.request(method, path, headers: all, body: text)
        var plain: [String: String] = [:]
        for field in response.headers { plain[field.name] = field.value }
        let parsed = response.body.isEmpty ? nil : try? JSONSerialization.jsonObject(with: Data(response.body))
        return APIResponse(
            status: response.status, headers: plain, json: parsed as? [String: Any] ?? [:],
            array: parsed as? [[String: Any]] ?? [], text: response.bodyText)
    }

    /// Signs up and returns (access token, refresh token, user id).
    public func signUp(role: String, name: String, email: String, password: String = "secret1") throws -> (access: String, refresh: String, id: String) {
        let response = try call("POST", "/v1/auth/signup", [
            "role": role, "full_name": name, "email": email, "password": password, "password_confirmation": password,
        ])
        guard response.status == 201, let access = response.string("access_token"), let refresh = response.string("refresh_token"),
              let id = response.object("user")?["id"] as? String
        else { throw BlockingSocket.Failure(description: "sign-up failed: \(response.status) \(response.text)") }
        return (access, refresh, id)
    }

    public typealias Account = (access: String, refresh: String, id: String)

    /// A coach and `count` clients who each pick them (linked, a thread each), emails at `@domain`.
    public func coachWithClients(_ count: Int, domain: String) throws -> (coach: Account, clients: [Account], threads: [String]) {
        let coach = try signUp(role: "coach", name: "Coach", email: "coach@\(domain)")
        var clients: [Account] = []
        var threads: [String] = []
        for index in 0..<count {
            let client = try signUp(role: "client", name: "Client \(index)", email: "c\(index)@\(domain)")
            let link = try call("POST", "/v1/me/coach", ["coach_id": coach.id], token: client.access)
            guard let thread = link.string("thread_id") else { throw BlockingSocket.Failure(description: "no link: \(link.text)") }
            clients.append(client)
            threads.append(thread)
        }
        return (coach, clients, threads)
    }
}

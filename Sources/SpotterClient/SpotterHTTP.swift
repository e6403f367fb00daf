import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The HTTP calls an app needs (Protocol/openapi.yaml): accounts, the coach link, push devices. Errors are
/// `SpotterError`s with the HTTP `status`; a server out of reach is `connection_lost`.
public struct SpotterHTTP: Sendable {
    /// The server, e.g. `https://chat.example.com`.
    public var baseURL: URL
    /// `Accept-Language` of every request (`en`, `ar`): the language of error messages.
    public var language: String?
    /// Bounds every request.
    public var timeout: TimeInterval

    public init(baseURL: URL, language: String? = nil, timeout: TimeInterval = 30) {
        self.baseURL = baseURL
        self.language = language
        self.timeout = timeout
    }

    // MARK: - Accounts

    public func signUp(role: String, fullName: String, email: String, password: String) async throws -> AuthSession {
        try await call("POST", "/v1/auth/signup", body: [
            "role": .string(role), "full_name": .string(fullName), "email": .string(email),
            "password": .string(password), "password_confirmation": .string(password),
        ])
    }

    public func signIn(email: String, password: String) async throws -> AuthSession {
        try await call("POST", "/v1/auth/signin", body: ["email": .string(email), "password": .string(password)])
    }

    /// Trades the refresh token for a new pair; the old one stops working (keep only the newest).
    public func refresh(refreshToken: String) async throws -> AuthSession {
        try await call("POST", "/v1/auth/refresh", body: ["refresh_token": .string(refreshToken)])
    }

    /// Ends the session: its tokens, its sockets (closed with 4003) and the push devices it registered.
    public func signOut(refreshToken: String) async throws {
        _ = try await data("POST", "/v1/auth/signout", body: ["refresh_token": .string(refreshToken)], token: nil)
    }

    public func me(token: String) async throws -> User {
        try await call("GET", "/v1/me", token: token)
    }

    /// A client picks a coach: the link and its thread.
    public func linkCoach(_ coachId: String, token: String) async throws -> CoachLink {
        try await call("POST", "/v1/me/coach", body: ["coach_id": .string(coachId)], token: token)
    }

    // MARK: - Push devices

    /// Registers this device for pushes (at every launch, and whenever the platform hands the app a new token).
    public func registerDevice(_ device: DeviceRegistration, token: String) async throws -> Device {
        try await call("POST", "/v1/me/devices", body: device.body, token: token)
    }

    public func devices(token: String) async throws -> [Device] {
        try await (call("GET", "/v1/me/devices", token: token) as DeviceList).devices
    }

    public func removeDevice(id: String, token: String) async throws {
        // An id is one path segment: unreserved characters (RFC 3986) as they are, anything else escaped.
        let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        let path = "/v1/me/devices/" + (id.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")
        _ = try await data("DELETE", path, body: nil, token: token)
    }

    // MARK: - Any call

    /// Calls `path` and decodes the answer's JSON as `T`.
    public func call<T: Decodable>(_ method: String, _ path: String, body: JSONValue? = nil, token: String? = nil) async throws -> T {
        let answer = try await data(method, path, body: body, token: token)
        do {
            return try WireJSON.decode(T.self, from: answer)
        } catch {
            throw SpotterError.badResponse("\(method) \(path): \(error)")
        }
    }

    /// Calls `path`; the body of a 2xx answer (empty for 204).
    public func data(_ method: String, _ path: String, body: JSONValue?, token: String?) async throws -> Data {
        guard let url = URL(string: path, relativeTo: baseURL) else { throw SpotterError.badResponse("bad path \(path)") }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        if let body {
            request.httpBody = WireJSON.encode(body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let language { request.setValue(language, forHTTPHeaderField: "Accept-Language") }
        let answer: Data
        let response: URLResponse
        do {
            (answer, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw SpotterError(code: "connection_lost", message: "The server could not be reached: \(error.localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            if var refusal = (try? WireJSON.decode(ErrorBody.self, from: answer))?.error {
                refusal.status = status
                throw refusal
            }
            throw SpotterError(code: "http_\(status)", message: String(decoding: answer.prefix(200), as: UTF8.self), status: status)
        }
        return answer
    }
}

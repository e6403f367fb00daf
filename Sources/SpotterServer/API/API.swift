import EventLoop
import SpotterCore
import SpotterProtocol
import SpotterStore
import WebSocket

/// The HTTP API under `/v1/`. Loop thread only: it keeps the rate limiters;
/// everything that touches the database or hashes a password runs in
/// `loop.runBlocking` and answers through `respond` back on the loop.
final class API {
    unowned let server: Server
    let services: APIServices
    /// Failed sign-ins per account (email or phone): brute force on one account.
    var failuresByAccount = RateLimiter(limit: 5, windowSeconds: 15 * 60)
    /// Sign-in and OTP attempts per client address: spraying many accounts.
    var attemptsByAddress = RateLimiter(limit: 30, windowSeconds: 15 * 60)
    /// OTP requests per address (each one may send an SMS).
    var otpRequestsByAddress = RateLimiter(limit: 10, windowSeconds: 60 * 60)

    init(server: Server, services: APIServices) {
        self.server = server
        self.services = services
    }

    typealias Respond = (HTTPResponse) -> Void

    /// A request the API handles, or nil for paths outside `/v1/`.
    func route(_ request: HTTPRequest, peer: String) -> Server.Route? {
        let path = request.path
        guard path.hasPrefix("/v1/") else { return nil }
        let chosen = request.headers["Accept-Language"].map { Language(acceptLanguage: $0) }
        let language = chosen ?? .english
        let parts = path.split(separator: "/").map(String.init)  // ["v1", …]
        let method = request.method

        if path == "/v1/ws" { return upgrade(request, language: chosen) }

        func handle(_ body: @escaping (Actor?, @escaping Respond) throws -> Void, auth: Bool = true) -> Server.Route {
            .deferred { respond in
                do {
                    let actor = auth ? try self.authenticate(request) : nil
                    try body(actor, respond)
                } catch {
                    respond(.apiError(APIError(wrapping: error), language))
                }
            }
        }
        func fail(_ error: APIError) -> Server.Route { .respond(.apiError(error, language)) }

        switch (method, parts.dropFirst().joined(separator: "/")) {
        case ("POST", "auth/signup"):
            return handle({ _, respond in try self.signUp(request, language, respond) }, auth: false)
        case ("POST", "auth/signin"):
            return handle({ _, respond in try self.signIn(request, peer: peer, language, respond) }, auth: false)
        case ("POST", "auth/refresh"):
            return handle({ _, respond in try self.refresh(request, language, respond) }, auth: false)
        case ("POST", "auth/signout"):
            return handle({ _, respond in try self.signOut(request, language, respond) }, auth: false)
        case ("POST", "auth/otp/request"):
            return handle({ _, respond in try self.requestOTP(request, peer: peer, language, respond) }, auth: false)
        case ("POST", "auth/otp/verify"):
            return handle({ _, respond in try self.verifyOTP(request, peer: peer, language, respond) }, auth: false)
        case ("GET", "me"):
            return handle { actor, respond in self.me(actor!, language, respond) }
        case ("PUT", "me/language"):
            return handle { actor, respond in try self.setLanguage(request, actor!, language, respond) }
        case ("PUT", "me/onboarding"):
            return handle { actor, respond in try self.saveOnboarding(request, actor!, language, respond) }
        case ("GET", "coaches"):
            return handle { _, respond in self.listCoaches(language, respond) }
        case ("GET", "me/coach"):
            return handle { actor, respond in try self.myCoach(actor!, language, respond) }
        case ("POST", "me/coach"):
            return handle { actor, respond in try self.pickCoach(request, actor!, language, respond) }
        case ("POST", "me/coach-change-requests"):
            return handle { actor, respond in try self.requestChange(request, actor!, language, respond) }
        case ("GET", "coach/clients"):
            return handle { actor, respond in try self.coachClients(actor!, language, respond) }
        case ("GET", "admin/coach-change-requests"):
            return handle { actor, respond in
                try self.listChangeRequests(request, actor!, language, respond)
            }
        case ("POST", "admin/provision"):
            return handle { actor, respond in try self.provision(request, actor!, language, respond) }
        case ("POST", _) where parts.count == 5 && parts[1] == "admin" && parts[2] == "coach-change-requests"
            && (parts[4] == "approve" || parts[4] == "reject"):
            return handle { actor, respond in
                try self.decideChange(id: parts[3], approve: parts[4] == "approve", actor!, language, respond)
            }
        case ("GET", _) where parts.count == 4 && parts[1] == "clients" && parts[3] == "profile":
            return handle { actor, respond in try self.clientProfile(parts[2], actor!, language, respond) }
        default:
            let known = ["auth/signup", "auth/signin", "auth/refresh", "auth/signout", "auth/otp/request",
                         "auth/otp/verify", "me", "me/language", "me/onboarding", "coaches", "me/coach", "me/coach-change-requests",
                         "coach/clients", "admin/coach-change-requests", "admin/provision"]
            if known.contains(parts.dropFirst().joined(separator: "/")) { return fail(APIError(.methodNotAllowed)) }
            return fail(APIError(.notFound))
        }
    }

    /// Forgets idle rate-limit keys so the limiters stay small. Once a second.
    func pruneLimiters() {
        let now = unixNow()
        failuresByAccount.prune(now: now)
        attemptsByAddress.prune(now: now)
        otpRequestsByAddress.prune(now: now)
    }

    // MARK: - Authentication

    /// The bearer token of an HTTP request (header, or `access_token` in the
    /// query for browsers that cannot set headers on a WebSocket).
    func bearerToken(_ request: HTTPRequest) -> String? {
        if let header = request.headers["Authorization"] {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1]) }
            return nil
        }
        return request.queryParameter("access_token")
    }

    func authenticate(_ request: HTTPRequest) throws(APIError) -> Actor {
        try verify(bearerToken(request)).actor
    }

    func verify(_ token: String?) throws(APIError) -> (actor: Actor, claims: AccessClaims) {
        guard let token else { throw APIError(.unauthorized) }
        do {
            let claims = try services.signer.verify(token, now: unixNow())
            return (Actor(userID: claims.subject, role: claims.role), claims)
        } catch .expired {
            throw APIError(.tokenExpired)
        } catch {
            throw APIError(.unauthorized)
        }
    }

    /// Runs blocking `work` on the pool, then answers with `status` and its
    /// JSON result, or the error.
    func run<T: Sendable & Encodable>(
        status: Int = 200, _ language: Language, _ respond: @escaping Respond,
        _ work: @escaping @Sendable () throws -> T
    ) {
        server.loop.runBlocking({ blockingResult(work) }, then: { result in
            switch result {
            case .success(let value): respond(.json(status, value))
            case .failure(let error): respond(.apiError(error, language))
            }
        })
    }

    // MARK: - WebSocket

    private func upgrade(_ request: HTTPRequest, language: Language?) -> Server.Route {
        do throws(APIError) {
            let (actor, claims) = try verify(bearerToken(request))
            var resume: Int64?
            if let text = request.queryParameter("cursor") {
                guard let value = Int64(text), value >= 0 else { throw APIError(.badRequest, field: "cursor") }
                resume = value
            }
            return .upgrade(AppSocket(api: self, actor: actor, claims: claims, language: language, resumeCursor: resume))
        } catch {
            // 401 before the upgrade: the client must sign in or refresh first.
            server.metrics.recordHandshakeFailure(status: error.code.httpStatus, reason: HTTPError.metricReason(error.code.httpStatus))
            return .respond(.apiError(error, language ?? .english))
        }
    }
}

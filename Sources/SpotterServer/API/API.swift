import EventLoop
import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// The HTTP API under `/v1/`. Loop thread only: it keeps the rate limiters;
/// everything that touches the database or hashes a password runs in
/// `loop.runBlocking` and answers through `respond` back on the loop.
final class API {
    let server: ServerParts
    let services: APIServices
    /// Failed sign-ins per account (email or phone): brute force on one account.
    var failuresByAccount = RateLimiter(limit: 5, windowSeconds: 15 * 60)
    /// Sign-in and OTP attempts per client address: spraying many accounts.
    var attemptsByAddress = RateLimiter(limit: 30, windowSeconds: 15 * 60)
    /// OTP requests per address (each one may send an SMS).
    var otpRequestsByAddress = RateLimiter(limit: 10, windowSeconds: 60 * 60)
    /// Sign-ups per address (each one costs a password hash and an account).
    var signupsByAddress: RateLimiter
    /// The four above, counted in the database every process shares (PostgreSQL); nil counts them here (`API+RateLimits`).
    let sharedLimits: (any RateLimitCounters)?
    /// When ended windows are next deleted from `sharedLimits`.
    var sharedLimitsExpireAt: Int64 = 0
    /// Password hashing, on threads apart from the database reads.
    let hashPool: WorkerPool

    /// Sessions revoked within the last access-token lifetime (session id →
    /// when): their access tokens are refused without a database read.
    /// Older entries are dropped, since every token they could refuse has expired.
    private(set) var revokedSessions: [String: Int64] = [:]
    /// Users whose export is streaming (`API+Export`).
    var exportsInFlight: Set<String> = []
    /// Cluster mode: the periodic read of revocations other processes committed (`API+ClusterAccounts`).
    var revocationPoll: RevocationPoll

    init(server: ServerParts, services: APIServices, revoked: [RevokedSession], sharedLimits: (any RateLimitCounters)? = nil) {
        self.server = server
        self.services = services
        self.sharedLimits = sharedLimits
        revocationPoll = RevocationPoll(readThrough: services.clock.now)
        let config = server.config
        signupsByAddress = RateLimiter(limit: config.signupsPerHour, windowSeconds: 60 * 60)
        hashPool = WorkerPool(loop: server.loop, threads: config.hashThreads, queueLimit: config.hashQueueLimit, label: "spotter.hash")
        for session in revoked { revokedSessions[session.familyID] = session.revokedAt }
    }

    /// A session was revoked (sign-out, or a reused refresh token): refuse its
    /// access tokens from now on and close its sockets with 4003. `counted`: revoked here (the metric counts
    /// each revocation once in a cluster, where the process that made it does).
    func sessionRevoked(_ session: RevokedSession, counted: Bool = true) {
        if revokedSessions.updateValue(session.revokedAt, forKey: session.familyID) == nil, counted {
            server.metrics.sessionsRevoked.increment()
        }
        server.runner.closeSockets(userID: session.userID, sessionID: session.familyID)
    }

    /// How long a revocation must be remembered: an access token issued just before it lives this long.
    var revocationMemorySeconds: Int64 { services.accessLifetime + 60 }

    typealias Respond = (HTTPResponse) -> Void

    /// One call of an endpoint: what its handler needs.
    struct Call {
        let request: HTTPRequest
        let peer: String
        let language: Language
        /// The signed-in caller; nil only for endpoints without `auth`.
        let actor: Actor?
        /// The path segments matched by `*` in the endpoint's pattern.
        let parameters: [String]
        let respond: Respond
        var signedIn: Actor { actor! }
    }

    struct Endpoint: Sendable {
        let method: String
        /// Path below `/v1/`, split on `/`; `*` matches one segment.
        let pattern: [Substring]
        let auth: Bool
        /// Exists only in development mode (404 otherwise).
        let developmentOnly: Bool
        /// Exists only when the server was started for load tests (404 otherwise).
        let provisioningOnly: Bool
        /// A body limit above the server's default (an upload), decided from the request head.
        let maxBodyBytes: Int?
        let handler: @Sendable (API, Call) throws -> Void
        /// An upload's checks from its head (the body not read yet), answering what to do with the body once
        /// it is on disk. Set for the endpoints with `maxBodyBytes`; their `handler` is unused.
        let upload: UploadCheck?
        /// An upload to the thread its first `*` names: in a cluster, a thread this process does not hold yet is read
        /// before `upload` decides (`API+UploadAdmission`).
        let uploadReadsThread: Bool
        init(_ method: String, _ path: String, auth: Bool = true, developmentOnly: Bool = false, provisioningOnly: Bool = false,
             maxBodyBytes: Int? = nil, _ handler: @escaping @Sendable (API, Call) throws -> Void) {
            self.method = method
            pattern = path.split(separator: "/", omittingEmptySubsequences: false)
            self.auth = auth
            self.developmentOnly = developmentOnly
            self.provisioningOnly = provisioningOnly
            self.maxBodyBytes = maxBodyBytes
            self.handler = handler
            upload = nil
            uploadReadsThread = false
        }

        /// An upload endpoint: signed in, its body up to `maxBodyBytes`, read only once `check` has passed.
        init(_ method: String, _ path: String, uploadUpTo maxBodyBytes: Int, readingThread: Bool = false,
             _ check: @escaping UploadCheck) {
            self.method = method
            pattern = path.split(separator: "/", omittingEmptySubsequences: false)
            auth = true
            developmentOnly = false
            provisioningOnly = false
            self.maxBodyBytes = maxBodyBytes
            handler = { _, _ in }
            upload = check
            uploadReadsThread = readingThread
        }

        /// The `*` segments, or nil if `parts` is not this endpoint's path.
        func match(_ parts: [Substring]) -> [String]? {
            guard parts.count == pattern.count else { return nil }
            var parameters: [String] = []
            for (part, expected) in zip(parts, pattern) {
                if expected == "*" {
                    guard !part.isEmpty else { return nil }
                    parameters.append(String(part))
                } else if part != expected {
                    return nil
                }
            }
            return parameters
        }
    }

    /// Every endpoint under `/v1/` (the WebSocket aside). A path that matches
    /// with another method gets 405 and `Allow` listing the methods it has.
    static let endpoints: [Endpoint] = [
        Endpoint("POST", "auth/signup", auth: false) { try $0.signUp($1.request, peer: $1.peer, $1.language, $1.respond) },
        Endpoint("POST", "auth/signin", auth: false) { try $0.signIn($1.request, peer: $1.peer, $1.language, $1.respond) },
        Endpoint("POST", "auth/refresh", auth: false) { try $0.refresh($1.request, $1.language, $1.respond) },
        Endpoint("POST", "auth/signout", auth: false) { try $0.signOut($1.request, $1.language, $1.respond) },
        Endpoint("POST", "auth/otp/request", auth: false) { try $0.requestOTP($1.request, peer: $1.peer, $1.language, $1.respond) },
        Endpoint("POST", "auth/otp/verify", auth: false) { try $0.verifyOTP($1.request, peer: $1.peer, $1.language, $1.respond) },
        Endpoint("POST", "auth/apple", auth: false) { try $0.signIn(with: .apple, $1.request, peer: $1.peer, $1.language, $1.respond) },
        Endpoint("POST", "auth/google", auth: false) { try $0.signIn(with: .google, $1.request, peer: $1.peer, $1.language, $1.respond) },
        Endpoint("GET", "me") { $0.me($1.signedIn, $1.language, $1.respond) },
        Endpoint("PUT", "me/language") { try $0.setLanguage($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("PUT", "me") { try $0.updateProfile($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("DELETE", "me") { try $0.eraseMe($1.request, peer: $1.peer, $1.signedIn, $1.language, $1.respond) },
        Endpoint("PUT", "me/password") { try $0.changePassword($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("POST", "me/email") { try $0.startEmailChange($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("POST", "me/email/verify") { try $0.verifyEmailChange($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("PUT", "me/avatar", uploadUpTo: AttachmentRules.Kind.png.maxBytes) { $0.admitAvatar($1.signedIn, $1.language) },
        Endpoint("DELETE", "me/avatar") { $0.removeAvatar($1.signedIn, $1.language, $1.respond) },
        Endpoint("GET", "users/*/avatar/*") { $0.avatar($1.parameters[0], $1.parameters[1], $1.signedIn, $1.language, $1.respond) },
        Endpoint("GET", "users/*/avatar/*/thumbnail") {
            $0.avatarThumbnail($1.parameters[0], $1.parameters[1], $1.signedIn, $1.language, $1.respond)
        },
        Endpoint("POST", "me/devices") { try $0.registerDevice($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("GET", "me/devices") { $0.listDevices($1.signedIn, $1.language, $1.respond) },
        Endpoint("DELETE", "me/devices/*") { $0.deleteDevice($1.parameters[0], $1.signedIn, $1.language, $1.respond) },
        // Public: a browser asks before it subscribes, signed in or not (the key is the server's public half).
        Endpoint("GET", "push/vapid-public-key", auth: false) { $0.vapidPublicKey($1.language, $1.respond) },
        Endpoint("GET", "me/notifications") { $0.notificationSettings($1.signedIn, $1.language, $1.respond) },
        Endpoint("PUT", "me/notifications") { try $0.updateNotificationSettings($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("GET", "me/availability") { $0.availability($1.signedIn, $1.language, $1.respond) },
        Endpoint("PUT", "me/availability") { try $0.setAvailability($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("GET", "me/goal-preferences") { $0.goalPreferences($1.signedIn, $1.language, $1.respond) },
        Endpoint("PUT", "me/goal-preferences") { try $0.updateGoalPreferences($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("PUT", "me/onboarding") { try $0.saveOnboarding($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("GET", "coaches") { $0.listCoaches($1.language, $1.respond) },
        Endpoint("GET", "me/coach") { try $0.myCoach($1.signedIn, $1.language, $1.respond) },
        Endpoint("POST", "me/coach") { try $0.pickCoach($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("POST", "me/coach-change-requests") { try $0.requestChange($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("GET", "coach/clients") { try $0.coachClients($1.signedIn, $1.language, $1.respond) },
        Endpoint("GET", "clients/*/profile") { try $0.clientProfile($1.parameters[0], $1.signedIn, $1.language, $1.respond) },
        Endpoint("GET", "admin/users") { try $0.listUsers($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("GET", "admin/coach-change-requests") { try $0.listChangeRequests($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("POST", "admin/coach-change-requests/*/approve") {
            try $0.decideChange(id: $1.parameters[0], approve: true, $1.signedIn, $1.language, $1.respond)
        },
        Endpoint("POST", "admin/coach-change-requests/*/reject") {
            try $0.decideChange(id: $1.parameters[0], approve: false, $1.signedIn, $1.language, $1.respond)
        },
        Endpoint("DELETE", "admin/users/*") { try $0.eraseUser($1.parameters[0], $1.signedIn, $1.language, $1.respond) },
        Endpoint("PUT", "admin/users/*/tier") { try $0.setTier($1.parameters[0], $1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("POST", "threads/*/attachments", uploadUpTo: AttachmentRules.maxBytes, readingThread: true) {
            try $0.admitAttachment($1.parameters[0], $1.signedIn, $1.language)
        },
        Endpoint("GET", "threads/*/attachments/*") {
            try $0.download($1.parameters[0], $1.parameters[1], $1.signedIn, $1.language, $1.respond)
        },
        Endpoint("GET", "threads/*/attachments/*/thumbnail") {
            try $0.downloadThumbnail($1.parameters[0], $1.parameters[1], $1.signedIn, $1.language, $1.respond)
        },
        Endpoint("GET", "admin/coaches/*/ratings") { try $0.coachRatings($1.parameters[0], $1.signedIn, $1.language, $1.respond) },
        Endpoint("POST", "admin/api-keys") { try $0.createAPIKey($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("GET", "admin/api-keys") { try $0.listAPIKeys($1.signedIn, $1.language, $1.respond) },
        Endpoint("DELETE", "admin/api-keys/*") { try $0.revokeAPIKey($1.parameters[0], $1.signedIn, $1.language, $1.respond) },
        Endpoint("POST", "admin/webhooks") { try $0.createWebhook($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("GET", "admin/webhooks") { try $0.listWebhooks($1.signedIn, $1.language, $1.respond) },
        Endpoint("DELETE", "admin/webhooks/*") { try $0.deleteWebhook($1.parameters[0], $1.signedIn, $1.language, $1.respond) },
        Endpoint("POST", "admin/webhooks/*/rotate") { try $0.rotateWebhookSecret($1.parameters[0], $1.signedIn, $1.language, $1.respond) },
        Endpoint("GET", "admin/webhooks/*/dead-letters") {
            try $0.webhookDeadLetters($1.parameters[0], $1.signedIn, $1.language, $1.respond)
        },
        Endpoint("POST", "admin/webhooks/*/dead-letters/replay") {
            try $0.replayWebhookDeadLetters($1.parameters[0], $1.request, $1.signedIn, $1.language, $1.respond)
        },
        // A billing service's call (API key with the `tier` scope), idempotent by `Idempotency-Key`.
        Endpoint("PUT", "services/users/*/tier", auth: false) {
            try $0.serviceSetTier($1.parameters[0], $1.request, $1.language, $1.respond)
        },
        // The AI service's call (API key with the `quota` scope), idempotent by `Idempotency-Key`.
        Endpoint("POST", "services/users/*/quotas/ai_generation/consume", auth: false) {
            try $0.serviceConsumeAIGeneration($1.parameters[0], $1.request, $1.language, $1.respond)
        },
        // A service's call: its API key is checked by the handler (it is not a user's token).
        Endpoint("POST", "threads/*/system-messages", auth: false) {
            try $0.postSystemMessage($1.parameters[0], $1.request, $1.language, $1.respond)
        },
        Endpoint("DELETE", "admin/threads/*/messages/*") {
            try $0.adminDeleteMessage($1.parameters[0], $1.parameters[1], $1.signedIn, $1.language, $1.respond)
        },
        Endpoint("POST", "admin/purge") { try $0.purgeNow($1.signedIn, $1.language, $1.respond) },
        Endpoint("GET", "admin/users/*/usage") { try $0.usage($1.parameters[0], $1.signedIn, $1.language, $1.respond) },
        Endpoint("POST", "admin/provision", provisioningOnly: true) { try $0.provision($1.request, $1.signedIn, $1.language, $1.respond) },
        Endpoint("POST", "dev/reset-limits", auth: false, developmentOnly: true) { api, call in api.resetLimits(call.respond) },
    ]

    /// The larger body limit of the endpoint `request` is for, if it has one (the parser asks from the head).
    static func bodyLimit(for request: HTTPRequest) -> Int? {
        // Every upgrade (a GET) walked the whole endpoint table here: 7,000 instructions of a connect.
        guard limitedMethods.contains(request.method), request.path.hasPrefix("/v1/") else { return nil }
        let parts = request.path.dropFirst(4).split(separator: "/", omittingEmptySubsequences: false)
        return endpoints.first { $0.maxBodyBytes != nil && $0.method == request.method && $0.match(parts) != nil }?.maxBodyBytes
    }

    /// The methods of the endpoints with a body limit of their own.
    static let limitedMethods = Set(endpoints.filter { $0.maxBodyBytes != nil }.map(\.method))

    /// A request the API handles, or nil for paths outside `/v1/`.
    func route(_ request: HTTPRequest, peer: String) -> Server.Route? {
        let path = request.path
        guard path.hasPrefix("/v1/") else { return nil }
        let chosen = request.headers["Accept-Language"].map { Language(acceptLanguage: $0) }
        let language = chosen ?? .english
        if path == "/v1/ws" { return upgrade(request, language: chosen) }
        if path == "/v1/me/export" { return exportRoute(request, language) }  // a streamed answer (`API+Export`)

        let parts = path.dropFirst(4).split(separator: "/", omittingEmptySubsequences: false)
        var allowed: [String] = []
        for endpoint in Self.endpoints
        where (server.config.development || !endpoint.developmentOnly) && (server.config.loadTestProvisioning || !endpoint.provisioningOnly) {
            guard let parameters = endpoint.match(parts) else { continue }
            guard endpoint.method == request.method else {
                allowed.append(endpoint.method)
                continue
            }
            if let upload = endpoint.upload {
                let head = Head(request: request, language: language, actor: nil, parameters: parameters)
                return endpoint.uploadReadsThread ? admitUploadReadingThread(request, upload, head) : admitUpload(request, upload, head)
            }
            return .deferred { respond in
                do {
                    let verified = endpoint.auth ? try self.verify(self.bearerToken(request)) : nil
                    // In a cluster, the session as the accounts hold it first (`checkedAcrossProcesses`).
                    self.checkedAcrossProcesses(verified?.claims) { refusal in
                        do {
                            if let refusal { throw refusal }
                            try endpoint.handler(self, Call(request: request, peer: peer, language: language, actor: verified?.actor,
                                                            parameters: parameters, respond: respond))
                        } catch {
                            respond(.apiError(APIError(wrapping: error), language))
                        }
                    }
                } catch {
                    respond(.apiError(APIError(wrapping: error), language))
                }
            }
        }
        guard allowed.isEmpty else {
            return .respond(.apiError(APIError(.methodNotAllowed), language, headers: [("Allow", allowed.joined(separator: ", "))]))
        }
        return .respond(.apiError(APIError(.notFound), language))
    }

    // MARK: - Uploads

    /// An upload's head: what its checks need (the body is not read yet).
    struct Head {
        let request: HTTPRequest
        let language: Language
        let actor: Actor?
        let parameters: [String]
        var signedIn: Actor { actor! }
    }

    /// What to do with an upload's body once it is on disk; it answers through the callback.
    typealias UploadReceived = (UploadedFile, @escaping Respond) -> Void
    typealias UploadCheck = @Sendable (API, Head) throws -> UploadReceived

    /// Decides an upload from its head, before any byte of its body is read: the token (401), the
    /// endpoint's own checks (403 for a thread the caller is not in, …), then room under
    /// `maxUploadBytesInFlight` (503 `unavailable` with `Retry-After`). A refusal is answered at once and
    /// the connection closed with the body unread.
    func admitUpload(_ request: HTTPRequest, _ check: UploadCheck, _ head: Head) -> Server.Route {
        do {
            let actor = try authenticate(request)
            let received = try check(self, Head(request: request, language: head.language, actor: actor, parameters: head.parameters))
            // The parser checked Content-Length (digits, at most the endpoint's limit) before the route was asked.
            let length = request.headers["Content-Length"].flatMap { Int($0) } ?? 0
            guard length > 0 else { throw APIError(.missingField, field: "body") }
            guard let reservation = server.reserveUpload(length) else {
                server.metrics.uploadsRefusedBusy.increment()
                throw APIError(.unavailable, retryAfterSeconds: 1)
            }
            return .receiveBody(UploadAdmission(length: length, directory: services.attachments.directory + "/incoming",
                                                reservation: reservation, received: received))
        } catch {
            return .respond(.apiError(APIError(wrapping: error), head.language))
        }
    }

    /// `POST /v1/dev/reset-limits` (development mode only): forgets every
    /// per-address and per-account count, so test runs start clean.
    func resetLimits(_ respond: @escaping Respond) {
        failuresByAccount.resetAll()
        attemptsByAddress.resetAll()
        otpRequestsByAddress.resetAll()
        signupsByAddress.resetAll()
        resetSharedLimits(respond)
    }

    /// Forgets idle rate-limit keys so the limiters stay small. Once a second.
    func pruneLimiters() {
        let now = services.clock.now
        failuresByAccount.prune(now: now)
        attemptsByAddress.prune(now: now)
        otpRequestsByAddress.prune(now: now)
        signupsByAddress.prune(now: now)
        if sharedLimits != nil, now >= sharedLimitsExpireAt {
            sharedLimitsExpireAt = now + 60
            expireSharedLimits()
        }
        let forgetBefore = now - revocationMemorySeconds
        if revokedSessions.values.contains(where: { $0 < forgetBefore }) {
            revokedSessions = revokedSessions.filter { $0.value >= forgetBefore }
        }
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
        let claims: AccessClaims
        do {
            claims = try services.signer.verify(token, now: services.clock.now)
        } catch .expired {
            throw APIError(.tokenExpired)
        } catch {
            throw APIError(.unauthorized)
        }
        guard revokedSessions[claims.sessionID] == nil else { throw APIError(.sessionRevoked) }
        // An erased account's tokens, also where its sessions' revocations are not known (another process of a
        // cluster learns the erasure from the log, not the revocations).
        if services.accounts.directory?.user(id: claims.subject)?.erasedAt != nil { throw APIError(.sessionRevoked) }
        return (Actor(userID: claims.subject, role: claims.role), claims)
    }

    /// Runs blocking `work` on the pool, then answers with `status` and its
    /// JSON result, or the error.
    func run<T: Sendable & Encodable>(
        status: Int = 200, _ language: Language, _ respond: @escaping Respond,
        _ work: @escaping @Sendable () throws -> T
    ) {
        server.loop.runBlocking({ blockingResult(work) }, then: API.answer(status: status, language, respond))
    }

    /// Answers with `status` and the JSON result, or the error.
    static func answer<T: Encodable>(status: Int, _ language: Language, _ respond: @escaping Respond) -> (Result<T, APIError>) -> Void {
        { result in
            switch result {
            case .success(let value): respond(.json(status, value))
            case .failure(let error): respond(.apiError(error, language))
            }
        }
    }

    /// Runs `work` (which hashes a password) on the hashing threads, then
    /// `completion` on the loop. When the hashing queue is full, `completion`
    /// gets 429 `server_busy` at once: a storm of sign-ins waits on its own
    /// threads and is cut off, while reads go on.
    func hashing<T: Sendable>(_ work: @escaping @Sendable () -> Result<T, APIError>,
                              then completion: @escaping (Result<T, APIError>) -> Void) {
        guard hashPool.submit(work, then: completion) else {
            server.metrics.hashQueueRejections.increment()
            completion(.failure(APIError(.serverBusy, retryAfterSeconds: 1)))
            return
        }
    }

    /// `run`, on the hashing threads.
    func hashing<T: Sendable & Encodable>(
        status: Int = 200, _ language: Language, _ respond: @escaping Respond, _ work: @escaping @Sendable () throws -> T
    ) {
        hashing({ blockingResult(work) }, then: API.answer(status: status, language, respond))
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
            guard server.runner.follower != nil else {
                return .upgrade(AppSocket(api: self, actor: actor, claims: claims, language: language, resumeCursor: resume))
            }
            // In a cluster, the session as the accounts hold it first (`checkedAcrossProcesses`).
            return .later { [self] decided in
                checkedAcrossProcesses(claims, caughtUp: true) { [self] refusal in
                    guard let refusal else {
                        return decided(.upgrade(AppSocket(api: self, actor: actor, claims: claims, language: language, resumeCursor: resume)))
                    }
                    decided(refusedUpgrade(refusal, language))
                }
            }
        } catch {
            return refusedUpgrade(error, language)
        }
    }

    private func refusedUpgrade(_ error: APIError, _ language: Language?) -> Server.Route {
        // 401 before the upgrade: the client must sign in or refresh first.
        server.metrics.recordHandshakeFailure(status: error.code.httpStatus, reason: HTTPError.metricReason(error.code.httpStatus))
        return .respond(.apiError(error, language ?? .english))  // closed after it: it asked for an upgrade
    }
}

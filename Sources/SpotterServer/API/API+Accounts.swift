import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// Sign-up, sign-in (email or phone code), token refresh and sign-out.
extension API {
    func signUp(_ request: HTTPRequest, peer: String, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        let body = try JSON.decode(SignUpRequest.self, from: request.body)
        guard let roleText = body.role else { throw APIError(.missingField, field: "role") }
        guard let role = Role(rawValue: roleText), role != .admin else { throw APIError(.invalidRole, field: "role") }
        let name = try AccountRules.normalizeName(body.fullName ?? "")
        guard let rawEmail = body.email else { throw APIError(.missingField, field: "email") }
        let email = try AccountRules.normalizeEmail(rawEmail)
        guard let password = body.password else { throw APIError(.missingField, field: "password") }
        try AccountRules.checkPassword(password, confirmation: body.passwordConfirmation ?? "")
        let timeZone = try body.timeZone.map { raw throws(APIError) in try TimeZoneRules.check(raw) } ?? "UTC"
        let gate = try admit(counting: [(.signupsByAddress, "addr:" + peer)])
        let services = self.services
        let preferred = language.rawValue
        hashing(status: 201, language, respond) { try gate.run {
            let now = services.clock.now
            let hash = services.hasher.hash(password)  // slow on purpose: on the hashing threads
            // One write, the language of the sign-up's Accept-Language included.
            let user = try services.accounts.createUser(
                id: SecureRandom.uuid(), role: role.rawValue, fullName: name, email: email, phone: nil,
                passwordHash: hash, language: preferred, timeZone: timeZone, now: now)
            return try services.issueSession(for: user, familyID: SecureRandom.uuid(), now: now)
        } }
    }

    func signIn(_ request: HTTPRequest, peer: String, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        let body = try JSON.decode(SignInRequest.self, from: request.body)
        guard let rawEmail = body.email else { throw APIError(.missingField, field: "email") }
        guard let password = body.password else { throw APIError(.missingField, field: "password") }
        let email = (try? AccountRules.normalizeEmail(rawEmail)) ?? rawEmail.lowercased()
        let account = "email:" + email
        let gate = try admit(counting: [(.attemptsByAddress, "addr:" + peer)], account: account)
        let services = self.services
        hashing({
            blockingResult { () -> SessionResponse in try gate.run {
                // Hash even for unknown accounts, so timing does not reveal which emails exist.
                let user = try services.accounts.user(email: email)
                let valid = services.hasher.verify(password, encoded: user?.passwordHash ?? API.decoyHash)
                guard let user, valid else { throw APIError(.invalidCredentials) }
                // A hash made with weaker parameters than today's is replaced while the password is at hand.
                if let stored = user.passwordHash, services.hasher.needsRehash(stored) {
                    try services.accounts.updatePasswordHash(userID: user.id, hash: services.hasher.hash(password))
                }
                return try services.issueSession(for: user, familyID: SecureRandom.uuid(), now: services.clock.now)
            } }
        }, then: { [self] result in
            switch result {
            case .success(let session):
                settleLocally(gate, account: account, nil)
                respond(.json(200, session))
            case .failure(let error):
                settleLocally(gate, account: account, error)
                respond(.apiError(error, language))
            }
        })
    }

    /// A valid scrypt encoding of a random password: verifying against it
    /// costs what a real check costs and never succeeds.
    static let decoyHash = PasswordHasher().hash(SecureRandom.token())

    func refresh(_ request: HTTPRequest, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        let token = try JSON.decode(RefreshRequest.self, from: request.body).refreshToken
        guard let token, !token.isEmpty else { throw APIError(.missingField, field: "refresh_token") }
        let services = self.services
        server.loop.runBlocking({ blockingResult { try API.rotate(token, services) } }, then: { [self] result in
            switch result {
            case .success(.session(let session, _)):
                respond(.json(200, session))
            case .success(.reused(let revoked)):
                sessionsRevoked([revoked])
                respond(.apiError(APIError(.refreshTokenReused), language))
            case .failure(let error):
                respond(.apiError(error, language))
            }
        })
    }

    enum Rotation: Sendable {
        /// The new pair, continuing session `familyID`.
        case session(SessionResponse, familyID: String)
        /// The token had been rotated already: its whole session is now revoked.
        case reused(RevokedSession)
    }

    /// Rotates a refresh token: the old one stops working, the new one
    /// continues its family. A rotated token presented again revokes the
    /// whole family (it was stolen, or the client is confused). With
    /// `ownerID`, another user's token is refused (`forbidden`) untouched.
    static func rotate(_ token: String, _ services: APIServices, ownerID: String? = nil) throws -> Rotation {
        let now = services.clock.now
        let fresh = SecureRandom.token()
        switch try services.accounts.rotateRefreshToken(
            oldHash: Digest.sha256Hex(token), newHash: Digest.sha256Hex(fresh), now: now,
            newExpiresAt: now + services.refreshLifetime, ownerID: ownerID)
        {
        case .rotated(let userID, let familyID):
            guard let user = try services.accounts.user(id: userID) else { throw APIError(.refreshTokenInvalid) }
            return .session(services.session(for: user, familyID: familyID, refresh: fresh, now: now), familyID: familyID)
        case .reused(let userID, let familyID):
            return .reused(RevokedSession(userID: userID, familyID: familyID, revokedAt: now))
        case .invalid:
            throw APIError(.refreshTokenInvalid)
        case .foreign:
            throw APIError(.forbidden, field: "refresh_token")
        }
    }

    func signOut(_ request: HTTPRequest, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        let token = try JSON.decode(RefreshRequest.self, from: request.body).refreshToken
        guard let token, !token.isEmpty else { throw APIError(.missingField, field: "refresh_token") }
        let services = self.services
        server.loop.runBlocking({
            blockingResult { try services.accounts.revokeFamily(ofTokenHash: Digest.sha256Hex(token), now: services.clock.now) }
        }, then: { [self] result in
            switch result {
            case .success(let revoked?):
                sessionsRevoked([revoked])
                respond(HTTPResponse(status: 204))
            case .success(nil): respond(.apiError(APIError(.refreshTokenInvalid), language))
            case .failure(let error): respond(.apiError(error, language))
            }
        })
    }

    // MARK: - Phone codes

    func requestOTP(_ request: HTTPRequest, peer: String, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard let raw = try JSON.decode(OTPStartRequest.self, from: request.body).phone else {
            throw APIError(.missingField, field: "phone")
        }
        let phone = try AccountRules.normalizeSaudiMobile(raw)
        let gate = try admit(counting: [(.otpRequestsByAddress, "addr:" + peer)])
        let services = self.services
        run(status: 202, language, respond) { try gate.run {
            let now = services.clock.now
            if let stored = try services.accounts.otpChallenge(phone: phone) {
                let challenge = OTPChallenge(codeDigest: stored.codeDigest, issuedAt: stored.issuedAt, failedAttempts: stored.failedAttempts)
                if let wait = challenge.resendWait(now: now) {
                    throw APIError(.otpResendTooSoon, field: "phone", retryAfterSeconds: wait)
                }
            }
            let code = SecureRandom.sixDigitCode()
            try services.accounts.saveOTPChallenge(
                phone: phone, codeDigest: services.otpDigest(code, phone: phone), issuedAt: now, failedAttempts: 0)
            do {
                try services.otpSender.send(code: code, to: phone)
            } catch {
                // Undelivered: do not make the user wait 60 s for a code they never got.
                try? services.accounts.deleteOTPChallenge(phone: phone)
                throw error
            }
            return OTPStartResponse(
                phone: phone, expiresIn: Int(OTPChallenge.lifetimeSeconds), resendAfter: Int(OTPChallenge.resendAfterSeconds),
                devCode: services.revealOTPCodes ? code : nil)
        } }
    }

    func verifyOTP(_ request: HTTPRequest, peer: String, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        let body = try JSON.decode(OTPVerifyRequest.self, from: request.body)
        guard let raw = body.phone else { throw APIError(.missingField, field: "phone") }
        guard let code = body.code else { throw APIError(.missingField, field: "code") }
        let phone = try AccountRules.normalizeSaudiMobile(raw)
        let gate = try admit(counting: [(.attemptsByAddress, "addr:" + peer)])
        let services = self.services
        let preferred = language.rawValue
        run(language, respond) { try gate.run {
            let now = services.clock.now
            guard let stored = try services.accounts.otpChallenge(phone: phone) else { throw APIError(.otpExpired, field: "code") }
            var challenge = OTPChallenge(codeDigest: stored.codeDigest, issuedAt: stored.issuedAt, failedAttempts: stored.failedAttempts)
            switch challenge.verify(candidateDigest: services.otpDigest(code, phone: phone), now: now) {
            case .accepted:
                try services.accounts.deleteOTPChallenge(phone: phone)
            case .wrong:
                try services.accounts.saveOTPChallenge(
                    phone: phone, codeDigest: challenge.codeDigest, issuedAt: challenge.issuedAt,
                    failedAttempts: challenge.failedAttempts)
                throw APIError(.otpInvalid, field: "code")
            case .expired:
                try services.accounts.deleteOTPChallenge(phone: phone)
                throw APIError(.otpExpired, field: "code")
            case .tooManyAttempts:
                throw APIError(.otpTooManyAttempts, field: "code")
            }
            // A correct code signs in, creating a client account on first use.
            let user = try services.accounts.user(phone: phone) ?? services.accounts.createUser(
                id: SecureRandom.uuid(), role: Role.client.rawValue, fullName: nil, email: nil, phone: phone,
                passwordHash: nil, language: preferred, now: now)
            return try services.issueSession(for: user, familyID: SecureRandom.uuid(), now: now)
        } }
    }

    func me(_ actor: Actor, _ language: Language, _ respond: @escaping Respond) {
        // In a cluster the row as stored: what the log's account records do not carry (an avatar, onboarding) may
        // have changed on another process (`AccountStore.storedUser`).
        let (services, stored) = (self.services, server.runner.follower != nil)
        run(language, respond) { () -> UserView in
            let user = try stored ? services.accounts.storedUser(id: actor.userID) : services.accounts.user(id: actor.userID)
            guard let user else { throw APIError(.unauthorized) }
            return user.view
        }
    }

    /// The saved language: used for socket messages when the app does not
    /// send `Accept-Language` (seed 000 FR-ACCOUNT-05).
    func setLanguage(_ request: HTTPRequest, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard let raw = try JSON.decode(LanguageRequest.self, from: request.body).language else {
            throw APIError(.missingField, field: "language")
        }
        guard let chosen = Language(rawValue: raw) else { throw APIError(.badRequest, field: "language") }
        saveProfile(actor, language: chosen, timeZone: nil, answerIn: chosen, respond)
    }

    /// `PUT /v1/me`: the language and/or the time zone, checked, saved together; answers the user.
    func updateProfile(_ request: HTTPRequest, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        let body = try JSON.decode(ProfileRequest.self, from: request.body)
        guard body.language != nil || body.timeZone != nil || body.fullName != nil else {
            throw APIError(.missingField, field: "time_zone")
        }
        let chosen = try body.language.map { raw throws(APIError) in
            guard let chosen = Language(rawValue: raw) else { throw APIError(.badRequest, field: "language") }
            return chosen
        }
        let timeZone = try body.timeZone.map { raw throws(APIError) in try TimeZoneRules.check(raw) }
        let name = try body.fullName.map { raw throws(APIError) in try AccountRules.normalizeName(raw) }
        saveProfile(actor, language: chosen, timeZone: timeZone, fullName: name, answerIn: chosen ?? language, respond)
    }

    /// Saves the checked language, time zone and/or name in one write and answers with the user as stored. A new
    /// name is what the user's peers see from then on (thread events, lists).
    private func saveProfile(_ actor: Actor, language: Language?, timeZone: String?, fullName: String? = nil, answerIn: Language,
                             _ respond: @escaping Respond) {
        let services = self.services
        server.loop.runBlocking({
            blockingResult { try services.accounts.updateProfile(userID: actor.userID, language: language?.rawValue,
                                                                 timeZone: timeZone, fullName: fullName) }
        }, then: { [self] (result: Result<UserRecord, APIError>) in
            if case .success(let user) = result {
                if let fullName { server.runner.core.setName(fullName, for: actor.userID) }
                // The AI generations' windows follow the zone: the kept figure is read again when next shown.
                if timeZone != nil { server.runner.rememberAIGenerations(nil, of: actor.userID) }
                profileChanged(user)  // and the other processes of a cluster follow
            }
            API.answer(status: 200, answerIn, respond)(result.map(\.view))
        })
    }

    /// `PUT /v1/me/password`: the current password is checked (on the hashing threads, limited like sign-ins), the
    /// new one stored, and every other session of the user signed out at once (their sockets close with 4003).
    func changePassword(_ request: HTTPRequest, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        let body = try JSON.decode(PasswordChangeRequest.self, from: request.body)
        guard let current = body.currentPassword, !current.isEmpty else { throw APIError(.missingField, field: "current_password") }
        guard let new = body.newPassword else { throw APIError(.missingField, field: "new_password") }
        try AccountRules.checkPassword(new, confirmation: body.newPasswordConfirmation ?? "")
        let session = try verify(bearerToken(request)).claims.sessionID
        let services = self.services
        withCurrentPassword(actor, current, requiredOnlyIfSet: false, language, respond) {
            try services.accounts.changePassword(userID: actor.userID, hash: services.hasher.hash(new), keep: session, now: services.clock.now)
        } answer: { [self] revoked in
            sessionsRevoked(revoked)
            return HTTPResponse(status: 204)
        }
    }
}

import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// The profile beyond a column update: a new email address confirmed by a code sent to it, the avatar, and the
/// current-password check they share with the password change.
extension API {
    // MARK: - Email

    /// `POST /v1/me/email`: checks the current password (when the account has one), then sends a code to the new
    /// address. The account keeps its old address (and signs in with it) until the code comes back.
    func startEmailChange(_ request: HTTPRequest, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        let body = try JSON.decode(EmailChangeRequest.self, from: request.body)
        guard let raw = body.email else { throw APIError(.missingField, field: "email") }
        let email = try AccountRules.normalizeEmail(raw)
        let services = self.services
        withCurrentPassword(actor, body.currentPassword, requiredOnlyIfSet: true, language, respond) { () throws -> EmailChangeResponse in
            let now = services.clock.now
            guard let user = try services.accounts.user(id: actor.userID) else { throw APIError(.unauthorized) }
            guard user.email != email else { throw APIError(.badRequest, field: "email") }
            if let pending = try services.accounts.emailChange(userID: actor.userID),
               let wait = OTPChallenge(codeDigest: pending.codeDigest, issuedAt: pending.issuedAt,
                                       failedAttempts: pending.failedAttempts).resendWait(now: now) {
                throw APIError(.otpResendTooSoon, field: "email", retryAfterSeconds: wait)
            }
            let code = SecureRandom.sixDigitCode()
            try services.accounts.saveEmailChange(userID: actor.userID, .init(
                email: email, codeDigest: services.emailDigest(code, userID: actor.userID, email: email),
                issuedAt: now, failedAttempts: 0))
            do {
                try services.emailSender.send(code: code, to: email)
            } catch {
                try? services.accounts.deleteEmailChange(userID: actor.userID)  // never sent: no resend wait
                throw error
            }
            return EmailChangeResponse(
                pendingEmail: email, expiresIn: Int(OTPChallenge.lifetimeSeconds),
                resendAfter: Int(OTPChallenge.resendAfterSeconds), devCode: services.revealEmailCodes ? code : nil)
        } answer: { .json(202, $0) }
    }

    /// `POST /v1/me/email/verify`: the code sent to the new address makes it the account's.
    func verifyEmailChange(_ request: HTTPRequest, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard let code = try JSON.decode(EmailVerifyRequest.self, from: request.body).code else {
            throw APIError(.missingField, field: "code")
        }
        let services = self.services
        run(language, respond) { () -> UserView in
            guard let pending = try services.accounts.emailChange(userID: actor.userID) else {
                throw APIError(.otpExpired, field: "code")
            }
            var challenge = OTPChallenge(codeDigest: pending.codeDigest, issuedAt: pending.issuedAt,
                                         failedAttempts: pending.failedAttempts)
            let candidate = services.emailDigest(code, userID: actor.userID, email: pending.email)
            switch challenge.verify(candidateDigest: candidate, now: services.clock.now) {
            case .accepted:
                return try services.accounts.confirmEmailChange(userID: actor.userID).view
            case .wrong:
                try services.accounts.countEmailChangeFailure(userID: actor.userID, failedAttempts: challenge.failedAttempts)
                throw APIError(.otpInvalid, field: "code")
            case .expired:
                try services.accounts.deleteEmailChange(userID: actor.userID)
                throw APIError(.otpExpired, field: "code")
            case .tooManyAttempts:
                throw APIError(.otpTooManyAttempts, field: "code")
            }
        }
    }

    // MARK: - Avatar

    /// `PUT /v1/me/avatar`: a JPEG or PNG (≤ 5 MB) as the body becomes the user's avatar. Signed in is all
    /// the head needs; the body, on disk, is checked and kept under its digest, with its thumbnail
    /// (`API+Thumbnails`).
    func admitAvatar(_ actor: Actor, _ language: Language) -> UploadReceived {
        { [self] file, respond in
            do {
                let kind = try AttachmentRules.check(prefix: file.prefix, count: file.bytes)
                guard kind != .pdf else { throw APIError(.unsupportedAttachment, field: "body") }
            } catch {
                return respond(.apiError(APIError(wrapping: error), language))
            }
            let services = self.services
            run(language, respond) { () -> UserView in
                // Its thumbnail first: a decompression bomb is refused before it is kept.
                let thumbnail = try Thumbnails.make(fromUploadAt: file.path, services.attachments)
                let digest = try API.storing {
                    let digest = try services.attachments.keepFile(at: file.path).id
                    if let thumbnail { try services.attachments.keepThumbnail(thumbnail.jpeg, of: digest) }
                    return digest
                }
                return try services.accounts.setAvatar(userID: actor.userID, digest).view
            }
        }
    }

    /// `DELETE /v1/me/avatar`: the user has no avatar from now on (its URL answers 404).
    func removeAvatar(_ actor: Actor, _ language: Language, _ respond: @escaping Respond) {
        let services = self.services
        run(language, respond) { try services.accounts.setAvatar(userID: actor.userID, nil).view }
    }

    /// `GET /v1/users/{id}/avatar/{digest}`: the image, to those who may see it (`AccessPolicy.canSeeAvatar`);
    /// a digest that is not the user's current avatar is `not_found`.
    func avatar(_ userID: String, _ digest: String, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) {
        let (services, stored) = (self.services, server.runner.follower != nil)
        server.loop.runBlocking({
            blockingResult { () -> [UInt8] in
                guard try services.mayReadAvatar(userID, digest, actor, stored: stored), let image = try services.attachments.contents(id: digest) else {
                    throw APIError(.notFound, field: "id")
                }
                return image
            }
        }, then: { result in
            switch result {
            case .success(let image):
                respond(HTTPResponse(status: 200, headers: [
                    ("Content-Type", AttachmentRules.kind(of: image)?.rawValue ?? "application/octet-stream"),
                    ("Cache-Control", "private, max-age=31536000, immutable"), ("X-Content-Type-Options", "nosniff"),
                ], body: image))
            case .failure(let error):
                respond(.apiError(error, language))
            }
        })
    }

    // MARK: - The current password

    /// Checks `current` against the user's password on the hashing threads (limited and counted like sign-ins), then
    /// runs `work` there and answers with `answer` of its result. With `requiredOnlyIfSet`, an account with no
    /// password (phone sign-in) needs none.
    func withCurrentPassword<T: Sendable>(
        _ actor: Actor, _ current: String?, requiredOnlyIfSet: Bool, _ language: Language, _ respond: @escaping Respond,
        _ work: @escaping @Sendable () throws -> T, answer: @escaping (T) -> HTTPResponse
    ) {
        let key = "user:" + actor.userID
        let gate: LimitGate
        do throws(APIError) {
            if !requiredOnlyIfSet, current?.isEmpty ?? true { throw APIError(.missingField, field: "current_password") }
            gate = try admit(counting: [], account: key)
        } catch {
            return respond(.apiError(error, language))
        }
        let services = self.services
        hashing({
            blockingResult { () -> T in try gate.run {
                let stored = try services.accounts.passwordHash(userID: actor.userID)
                if stored != nil || !requiredOnlyIfSet {
                    guard let current, !current.isEmpty else { throw APIError(.missingField, field: "current_password") }
                    guard services.hasher.verify(current, encoded: stored ?? API.decoyHash), stored != nil else {
                        throw APIError(.invalidCredentials, field: "current_password")
                    }
                }
                return try work()
            } }
        }, then: { [self] result in
            switch result {
            case .success(let value):
                settleLocally(gate, account: key, nil)
                respond(answer(value))
            case .failure(let error):
                settleLocally(gate, account: key, error)
                respond(.apiError(error, language))
            }
        })
    }
}

extension APIServices {
    /// The digest kept for a code confirming `email` as `userID`'s address: tied to both, so it confirms nothing else.
    func emailDigest(_ code: String, userID: String, email: String) -> String {
        Digest.sha256Hex(otpPepper + "|email|" + userID + "|" + email + "|" + code)
    }
}

import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

/// Erasing an account (issue 29): `DELETE /v1/me` (the user, proving it is them) and `DELETE /v1/admin/users/{id}`.
/// What goes and what stays is `AccountStore.erase`'s and Protocol/README.md's "Erasing an account".
extension API {
    /// `DELETE /v1/me`: `{"password": …}` for an account with a password, else `{"code": …}`, a code asked for
    /// with `POST /v1/auth/otp/request` on the account's phone. Limited like sign-ins (per address, and per account
    /// once wrong proofs pile up); a wrong password or code is `invalid_credentials` and changes nothing.
    func eraseMe(_ request: HTTPRequest, peer: String, _ actor: Actor, _ language: Language,
                 _ respond: @escaping Respond) throws(APIError) {
        let body = try JSON.decode(EraseAccountRequest.self, from: request.body)
        let key = "user:" + actor.userID
        let gate = try admit(counting: [(.attemptsByAddress, "addr:" + peer)], account: key)
        let services = self.services
        // The password is checked on the hashing threads (slow on purpose); a code is checked there too.
        hashing({ blockingResult { try gate.run { try API.proveOwner(actor.userID, body, services) } } }, then: { [self] result in
            switch result {
            case .success:
                settleLocally(gate, account: key, nil)
                erase(actor.userID, language, respond)
            case .failure(let error):
                settleLocally(gate, account: key, error)
                respond(.apiError(error, language))
            }
        })
    }

    /// `DELETE /v1/admin/users/{id}`: an admin erases another account (their own goes through `DELETE /v1/me`).
    /// Erasing an erased account again answers 204 and finishes what a failure may have left.
    func eraseUser(_ userID: String, _ actor: Actor, _ language: Language, _ respond: @escaping Respond) throws(APIError) {
        guard AccessPolicy.canAdminister(actor) else { throw APIError(.forbidden) }
        guard userID != actor.userID else { throw APIError(.forbidden, field: "id") }
        erase(userID, language, respond)
    }

    /// Checks the proof that the caller owns the account: its password, or (an account without one) a code sent to
    /// its phone, used up when right. Blocking.
    static func proveOwner(_ userID: String, _ body: EraseAccountRequest, _ services: APIServices) throws {
        guard let user = try services.accounts.user(id: userID), user.erasedAt == nil else { throw APIError(.unauthorized) }
        // A provider's fresh ID token proves the owner of an account it is linked to (API+Identity).
        if let token = body.idToken, !token.isEmpty { return try API.proveOwner(userID, idToken: token, services) }
        if let stored = try services.accounts.passwordHash(userID: userID) {
            guard let password = body.password, !password.isEmpty else { throw APIError(.missingField, field: "password") }
            guard services.hasher.verify(password, encoded: stored) else { throw APIError(.invalidCredentials, field: "password") }
            return
        }
        guard let phone = user.phone else { throw APIError(.forbidden) }  // neither: only an admin can erase it
        guard let code = body.code, !code.isEmpty else { throw APIError(.missingField, field: "code") }
        guard let stored = try services.accounts.otpChallenge(phone: phone) else { throw APIError(.otpExpired, field: "code") }
        var challenge = OTPChallenge(codeDigest: stored.codeDigest, issuedAt: stored.issuedAt, failedAttempts: stored.failedAttempts)
        switch challenge.verify(candidateDigest: services.otpDigest(code, phone: phone), now: services.clock.now) {
        case .accepted:
            try services.accounts.deleteOTPChallenge(phone: phone)
        case .wrong:
            try services.accounts.saveOTPChallenge(phone: phone, codeDigest: challenge.codeDigest, issuedAt: challenge.issuedAt,
                                                   failedAttempts: challenge.failedAttempts)
            throw APIError(.invalidCredentials, field: "code")
        case .expired:
            try services.accounts.deleteOTPChallenge(phone: phone)
            throw APIError(.otpExpired, field: "code")
        case .tooManyAttempts:
            throw APIError(.otpTooManyAttempts, field: "code")
        }
    }

    /// Erases the account: the accounts' transaction (refused for a coach with linked clients) with the ended links'
    /// records, then every socket closed (4004) and every session refused, the log's forgetting of the user's own
    /// content, and the avatar's file. Answers 204 once all of it is done.
    private func erase(_ userID: String, _ language: Language, _ respond: @escaping Respond) {
        let runner = server.runner
        let now = services.clock.now
        runner.linkChange({ done in
            runner.log.eraseAccount(userID: userID, now: now, completion: done)
        }, reply: { [self] (result: Result<AccountStore.Erasure, APIError>) in
            switch result {
            case .failure(let error):
                respond(.apiError(error, language))
            case .success(let erasure):
                runner.accountErased(erasure)
                for session in erasure.revoked { sessionRevoked(session) }
                server.metrics.accountsErased.increment()
                forgetContent(of: erasure, language, respond)
            }
        })
    }

    /// The user's own content: the log's `erasure` record (`CoreCommand.eraseUser`: the messages and coaching-record
    /// entries they wrote emptied, their attachments' rows gone, `user.erased` to each peer), then the avatar's file.
    /// The bytes leave the disk with the next purge. If the record cannot be stored now (the store is failing), the
    /// answer is that error: the account's side is done, and an admin's `DELETE /v1/admin/users/{id}` finishes it.
    private func forgetContent(of erasure: AccountStore.Erasure, _ language: Language, _ respond: @escaping Respond) {
        let services = self.services
        server.runner.run(.eraseUser(userID: erasure.userID)) { [self] result in
            if case .failure(let error) = result {
                server.logger.error("an erased account's log record could not be stored; erase it again",
                                    metadata: ["user": "\(erasure.userID)", "error": "\(error.code.rawValue)"])
                return respond(.apiError(error, language))
            }
            server.loop.runBlocking({
                blockingResult { if let avatar = erasure.orphanedAvatar { try services.attachments.removeAvatarFile(avatar) } }
            }, then: { result in
                switch result {
                case .success: respond(HTTPResponse(status: 204))
                case .failure(let error): respond(.apiError(error, language))
                }
            })
        }
    }
}

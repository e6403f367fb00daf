import SpotterCore
import SpotterPorts
import SpotterProtocol
import WebSocket

/// Sign in with Apple and Google (seed 001 "Platform"; issue 30 item 11): `POST /v1/auth/apple` and
/// `POST /v1/auth/google` take the provider's ID token, verify it (`IdentityVerification`: RS256 against the
/// provider's published keys, issuer, audience, expiry, nonce) and answer the same session as every sign-in.
///
/// Which account: the one linked to the provider's `sub`; else the account with the token's email when the
/// provider says it verified it (linked now; an admin's account is refused with `forbidden`); else a new account,
/// a client's unless the request asks for a coach's as sign-up allows (`role`), linked (201). An unverified email never joins an account and is not stored.
extension API {
    /// Bound on a raw nonce: apps send 32–64 characters.
    static let maxNonceBytes = 256

    func signIn(with provider: IdentityProvider, _ request: HTTPRequest, peer: String, _ language: Language,
                _ respond: @escaping Respond) throws(APIError) {
        let body = try JSON.decode(ProviderSignInRequest.self, from: request.body)
        guard let token = body.idToken, !token.isEmpty else { throw APIError(.missingField, field: "id_token") }
        guard services.identity.isEnabled(provider) else { throw APIError(.signInProviderDisabled) }
        if let nonce = body.nonce {
            guard !nonce.isEmpty, nonce.utf8.count <= Self.maxNonceBytes else { throw APIError(.badRequest, field: "nonce") }
        }
        let name = try body.fullName.map { raw throws(APIError) in try AccountRules.normalizeName(raw) }
        let timeZone = try body.timeZone.map { raw throws(APIError) in try TimeZoneRules.check(raw) } ?? "UTC"
        // A new account's role, as sign-up allows it: client (the default) or coach, never admin.
        let role = try body.role.map { raw throws(APIError) in
            guard let role = Role(rawValue: raw), role != .admin else { throw APIError(.invalidRole, field: "role") }
            return role
        } ?? .client
        // Counted like password sign-ins: a token is cheap to send and costs a signature check.
        let gate = try admit(counting: [(.attemptsByAddress, "addr:" + peer)])
        let services = self.services
        let preferred = language.rawValue
        let nonce = body.nonce
        // On the hashing threads: a signature check, and a key set read when the cached one is stale.
        hashing({
            blockingResult { () -> (SessionResponse, Bool) in try gate.run {
                let now = services.clock.now
                let identity = try services.identity.verify(provider, token: token, nonce: nonce, now: now)
                let (user, outcome): (UserRecord, AccountStore.IdentityOutcome)
                do {
                    (user, outcome) = try services.accounts.signIn(
                        provider: provider.rawValue, subject: identity.subject, verifiedEmail: identity.verifiedEmail,
                        fullName: name ?? identity.name.flatMap { try? AccountRules.normalizeName($0) },
                        language: preferred, timeZone: timeZone, role: role.rawValue, newUserID: SecureRandom.uuid(), now: now)
                } catch AccountStore.IdentityRefusal.adminAccount {
                    throw APIError(.forbidden, field: "id_token")
                }
                let session = try services.issueSession(for: user, familyID: SecureRandom.uuid(), now: now)
                return (session, outcome == .created)
            } }
        }, then: { result in
            switch result {
            case .success(let (session, created)): respond(.json(created ? 201 : 200, session))
            case .failure(let error): respond(.apiError(error, language))
            }
        })
    }

    /// `DELETE /v1/me` with `id_token`: the token verifies for the provider its issuer names, and that provider's
    /// `sub` is linked to `userID`; else `invalid_credentials` (field `id_token`), as a wrong password is.
    static func proveOwner(_ userID: String, idToken: String, _ services: APIServices) throws {
        let issuer = (try? IDToken(parsing: idToken))?.claims.issuer
        guard let provider = IdentityProvider.allCases.first(where: { issuer.map($0.issuers.contains) ?? false }) else {
            throw APIError(.invalidIDToken, field: "id_token")
        }
        let identity = try services.identity.verify(provider, token: idToken, nonce: nil, now: services.clock.now)
        guard try services.accounts.identityLinks(userID: userID)
            .contains(where: { $0.provider == provider.rawValue && $0.subject == identity.subject })
        else { throw APIError(.invalidCredentials, field: "id_token") }
    }
}

import EventLoop
import FoundationEssentials
import Logging
import SpotterCore
import SpotterProtocol
import SpotterPorts
import WebSocket

#if canImport(Glibc)
import Glibc
#endif

/// Hands out one-time codes. The default writes them to the server log; a
/// real deployment plugs in an SMS gateway (see deploy/README.md). Called
/// on a worker thread, never on the loop: it may block on the network.
public protocol OTPSender: Sendable {
    func send(code: String, to phone: String) throws
}

/// The development sender: no SMS goes out. No phone number or code is logged above debug level (seed 000
/// NFR-SEC-03: no personal data in logs); run with `--log-level debug` to read them, or use a development
/// server, whose code request answers the code itself.
public struct LogOTPSender: OTPSender {
    let logger: Logger
    /// What the codes go to: "phone" (sign-in codes) or "email" (codes confirming a new address).
    let channel: String
    public init(logger: Logger, channel: String = "phone") {
        self.logger = logger
        self.channel = channel
    }
    public func send(code: String, to address: String) throws {
        logger.notice("one-time code handed to the development sender (nothing sent; \(channel) and code at debug level)")
        logger.debug("one-time code (development sender)", metadata: [channel: "\(address)", "code": "\(code)"])
    }
}

/// What the HTTP and socket handlers share: the services that do their
/// work off the loop, and the helpers that shape replies. Every member is
/// Sendable so work closures can carry it to the thread pool.
struct APIServices: Sendable {
    let accounts: AccountStore
    let attachments: AttachmentStore
    let hasher: PasswordHasher
    let signer: AccessTokenSigner
    let otpSender: any OTPSender
    /// Where codes confirming a new email address go (`send(code:to:)` with the address).
    let emailSender: any OTPSender
    let accessLifetime: Int64
    let refreshLifetime: Int64
    /// Digest used for OTP codes: SHA-256 of a per-server pepper and the code.
    let otpPepper: String
    /// Development mode with the log sender: the code request's reply carries the code.
    let revealOTPCodes: Bool
    /// Development mode with the log sender for email: the email change's reply carries the code.
    let revealEmailCodes: Bool
    /// The server's clock (`ServerConfig.clock`): token lifetimes, codes, rate windows and ages read the time here.
    let clock: any Clock
    /// Sign in with Apple and Google: the providers' key sets and token checks.
    let identity: IdentityVerification

    func otpDigest(_ code: String, phone: String) -> String {
        Digest.sha256Hex(otpPepper + "|" + phone + "|" + code)
    }

    /// Starts a new session family (sign-up, sign-in, OTP) or continues one
    /// (refresh), storing only the refresh token's digest.
    func issueSession(for user: UserRecord, familyID: String, now: Int64) throws -> SessionResponse {
        let refresh = SecureRandom.token()
        try accounts.storeRefreshToken(
            hash: Digest.sha256Hex(refresh), userID: user.id, familyID: familyID, now: now, expiresAt: now + refreshLifetime)
        return session(for: user, familyID: familyID, refresh: refresh, now: now)
    }

    func session(for user: UserRecord, familyID: String, refresh: String, now: Int64) -> SessionResponse {
        let claims = AccessClaims(
            subject: user.id, role: Role(rawValue: user.role) ?? .client, sessionID: familyID,
            issuedAt: now, expiresAt: now + accessLifetime)
        return SessionResponse(
            accessToken: signer.sign(claims), expiresIn: Int(accessLifetime), refreshToken: refresh, user: user.view)
    }
}

extension UserRecord {
    var view: UserView {
        UserView(id: id, role: role, fullName: fullName, email: email, phone: phone, language: language,
                 onboardingCompleted: onboardingCompleted, timeZone: TimeZoneRules.shownName(timeZone),
                 avatarURL: UserView.avatarURL(userID: id, avatar: avatar), erasedAt: erasedAt)
    }
}


// MARK: - Shaping replies

enum JSON {
    static func encode<T: Encodable>(_ value: T) -> String { JSONText.encoder.encodeToString(value) }

    /// Decodes a request body under the known-fields rule: malformed JSON or a
    /// wrong field type is a `bad_request`, an unknown field `unknown_field`,
    /// each naming the field where the decoder can tell.
    static func decode<T: KnownFields>(_ type: T.Type, from bytes: [UInt8]) throws(APIError) -> T {
        do {
            return try JSONDecoder().decode(Checked<T>.self, from: Data(bytes.isEmpty ? Array("{}".utf8) : bytes)).value
        } catch {
            throw APIError(wrappingDecoding: error)
        }
    }
}

extension HTTPResponse {
    static func json<T: Encodable>(_ status: Int, _ value: T) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: JSON.encode(value) + "\n")
    }

    static func apiError(_ error: APIError, _ language: Language, headers extra: [(name: String, value: String)] = []) -> HTTPResponse {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")] + extra
        if let retry = error.retryAfterSeconds { headers.append(("Retry-After", String(retry))) }
        return HTTPResponse(status: error.code.httpStatus, headers: headers, body: error.jsonBody(language))
    }

    /// A request refused by the HTTP or WebSocket layer, in the API's error
    /// shape, with the headers the status calls for (`Allow`, `Sec-WebSocket-Version`).
    static func refusal(_ error: HTTPError, _ language: Language) -> HTTPResponse {
        let code: ErrorCode
        switch error.status {
        case 403: code = .originNotAllowed
        case 404: code = .notFound
        case 405: code = .methodNotAllowed
        case 408: code = .requestTimeout
        case 413: code = .payloadTooLarge
        case 426: code = .upgradeRequired
        case 431: code = .headersTooLarge
        case 501: code = .notImplemented
        case 505: code = .httpVersionNotSupported
        default: code = .badRequest
        }
        return apiError(APIError(code), language, headers: error.headers)
    }
}

extension AccountStoreError {
    /// How a store refusal reads on the wire.
    var apiError: APIError {
        switch self {
        case .emailTaken: return APIError(.emailTaken, field: "email")
        case .phoneTaken: return APIError(.conflict, field: "phone")
        case .notFound: return APIError(.notFound)
        case .coachHasClients(let count): return APIError(.coachHasClients, detail: .linkedClients(count: count))
        case .conflict(let reason):
            switch reason {
            case "already_linked": return APIError(.coachAlreadyAssigned)
            case "no_coach": return APIError(.noCoachAssigned)
            case "pending": return APIError(.coachChangePending)
            case "not_pending": return APIError(.requestNotPending)
            case "same_coach": return APIError(.conflict, field: "coach_id")
            case "feedback_given": return APIError(.conflict, field: "session_id")
            default: return APIError(.conflict)
            }
        }
    }
}

extension APIError {
    /// Any error from a handler, a rule or the store, as the wire shows it:
    /// the one place where errors are translated for clients.
    init(wrapping error: any Error) {
        switch error {
        case let error as APIError: self = error
        case let error as AccountStoreError: self = error.apiError
        // A file in the attachments' folder that could not be read (shared storage away): a retry is right.
        case is AttachmentStoreError: self = API.attachmentsUnavailable
        default: self.init(.internalError)
        }
    }
}

/// Runs `work` and maps any thrown error to an `APIError`.
func blockingResult<T: Sendable>(_ work: @Sendable () throws -> T) -> Result<T, APIError> {
    do {
        return .success(try work())
    } catch {
        return .failure(APIError(wrapping: error))
    }
}

import Testing
@testable import SpotterProtocol

/// The documented HTTP status of every code (contract table). Kept here independently of the source.
let documentedStatus: [ErrorCode: Int] = [
    .badRequest: 400, .missingField: 400, .invalidEmail: 400, .invalidName: 400, .passwordTooShort: 400,
    .passwordMismatch: 400, .invalidRole: 400, .invalidPhone: 400, .invalidTimeZone: 400, .outOfRange: 400, .emailTaken: 409,
    .invalidCredentials: 401, .unauthorized: 401, .tokenExpired: 401, .refreshTokenInvalid: 401,
    .refreshTokenReused: 401, .forbidden: 403, .notFound: 404, .methodNotAllowed: 405, .conflict: 409,
    .coachAlreadyAssigned: 409, .noCoachAssigned: 409, .coachChangePending: 409, .coachNotFound: 404,
    .requestNotPending: 409, .rateLimited: 429, .otpResendTooSoon: 429, .otpInvalid: 400, .otpExpired: 400,
    .otpTooManyAttempts: 429, .payloadTooLarge: 413, .unknownCommand: 400, .internalError: 500,
    .upgradeRequired: 426, .originNotAllowed: 403, .headersTooLarge: 431, .notImplemented: 501,
    .httpVersionNotSupported: 505, .messageTooLong: 400, .invalidMessage: 400, .threadInactive: 409,
    .cursorExpired: 410, .unknownField: 400, .idempotencyConflict: 409, .sessionRevoked: 401, .requestTimeout: 408,
    .serverBusy: 429, .sessionNotFound: 404, .sessionActionNotAllowed: 409, .waitingForCoach: 409,
    .sessionConflict: 409, .startInPast: 400, .invalidDuration: 400, .invalidPurpose: 400, .outsideJoinWindow: 409, .quotaExceeded: 429, .unsupportedAttachment: 415, .planUpgradeRequired: 403, .recordNotFound: 404, .taskNotAllowed: 409, .measurementTooSoon: 409, .unsafeGoal: 400, .goalActive: 409, .unavailable: 503,
    .tooManySessions: 409,  // issue 26: the open-sessions bound per pair
    .invalidDeviceToken: 400, .invalidPushKeys: 400, .invalidPushEndpoint: 400,  // issue 28: push devices
    .pushNotConfigured: 404,  // issue 28: no VAPID key
    .messageNotChangeable: 409, .editWindowClosed: 409, .messageDeleted: 409,  // issue 29: edits and deletes
    .coachHasClients: 409,  // issue 29: a coach's erasure while clients are linked
    .invalidWebhookURL: 400, .invalidWebhookEvents: 400, .tooManyWebhooks: 409,  // issue 29: webhooks
    .apiKeyScopeMissing: 403, .idempotencyKeyReused: 422,  // issue 29: tier changes from billing
    .imageTooLarge: 422,  // issue 30: thumbnails (decompression bombs)
    .invalidIDToken: 401, .idTokenExpired: 401, .signInProviderDisabled: 404, .identityKeysUnavailable: 503,  // issue 30: Apple/Google
    .challengeLength: 400, .challengeAlreadyJoined: 409, .challengeOver: 409,  // issue 30: group challenges
    .outsideAvailability: 409,  // issue 30: a client's time outside the coach's availability
]

/// True when `text` holds at least one letter of the Arabic block (U+0621…U+064A).
func containsArabicLetter(_ text: String) -> Bool {
    text.unicodeScalars.contains { (0x0621...0x064A).contains($0.value) }
}

@Suite("ErrorCode")
struct ErrorCodeTests {
    @Test("every case has its documented HTTP status", arguments: ErrorCode.allCases)
    func status(_ code: ErrorCode) {
        #expect(code.httpStatus == documentedStatus[code], "\(code)")
    }

    @Test("the status table covers every case")
    func tableIsComplete() {
        #expect(documentedStatus.count == ErrorCode.allCases.count)
        #expect(ErrorCode.allCases.count == 87)  // issue 30: + image_too_large, + 4 for Apple/Google sign-in, + 3 for group challenges, + outside_availability, + goal_active
    }

    @Test("English and Arabic messages are non-empty and differ", arguments: ErrorCode.allCases)
    func messages(_ code: ErrorCode) {
        let english = code.message(.english)
        let arabic = code.message(.arabic)
        #expect(!english.isEmpty)
        #expect(!arabic.isEmpty)
        #expect(english != arabic)
        #expect(containsArabicLetter(arabic), "Arabic message of \(code) has no Arabic letters")
        #expect(!containsArabicLetter(english), "English message of \(code) has Arabic letters")
        #expect(english.first?.isUppercase == true)
    }

    @Test("no two codes share a message in the same language", arguments: Language.allCases)
    func distinctMessages(_ language: Language) {
        let messages = ErrorCode.allCases.map { $0.message(language) }
        #expect(Set(messages).count == messages.count)
    }

    @Test("raw values are unique snake_case")
    func rawValues() {
        let raws = ErrorCode.allCases.map(\.rawValue)
        #expect(Set(raws).count == raws.count)
        for raw in raws {
            #expect(!raw.isEmpty)
            #expect(raw.allSatisfy { ($0 >= "a" && $0 <= "z") || $0 == "_" }, "\(raw)")
            #expect(raw.first != "_" && raw.last != "_")
        }
    }

    @Test("wire spellings are stable")
    func stableSpellings() {
        #expect(ErrorCode.badRequest.rawValue == "bad_request")
        #expect(ErrorCode.refreshTokenReused.rawValue == "refresh_token_reused")
        #expect(ErrorCode.otpTooManyAttempts.rawValue == "otp_too_many_attempts")
        #expect(ErrorCode.coachAlreadyAssigned.rawValue == "coach_already_assigned")
        #expect(ErrorCode(rawValue: "method_not_allowed") == .methodNotAllowed)
        #expect(ErrorCode(rawValue: "Bad_Request") == nil)
    }

    @Test("invalid credentials never says which part was wrong")
    func credentialsMessageIsVague() {
        let english = ErrorCode.invalidCredentials.message(.english).lowercased()
        #expect(english.contains("email") && english.contains("password"))
    }
}

// Request and response bodies of the HTTP account API (Protocol/openapi.yaml).
// Field names on the wire are snake_case; every type spells its keys out so
// a rename in Swift can never change the contract by accident.

/// `POST /v1/auth/signup`
public struct SignUpRequest: Codable, Sendable, Equatable {
    public var role: String?
    public var fullName: String?
    public var email: String?
    public var password: String?
    public var passwordConfirmation: String?
    /// An IANA time zone name; UTC when absent.
    public var timeZone: String?

    public init(role: String?, fullName: String?, email: String?, password: String?, passwordConfirmation: String?,
                timeZone: String? = nil) {
        self.role = role
        self.fullName = fullName
        self.email = email
        self.password = password
        self.passwordConfirmation = passwordConfirmation
        self.timeZone = timeZone
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case role, email, password
        case fullName = "full_name"
        case passwordConfirmation = "password_confirmation"
        case timeZone = "time_zone"
    }
}

/// `POST /v1/auth/signin`
public struct SignInRequest: Codable, Sendable, Equatable {
    public var email: String?
    public var password: String?
    public init(email: String?, password: String?) {
        self.email = email
        self.password = password
    }
    enum CodingKeys: String, CodingKey, CaseIterable { case email, password }
}

/// `POST /v1/auth/refresh`, `POST /v1/auth/signout`, and the `auth.refresh` socket command.
public struct RefreshRequest: Codable, Sendable, Equatable {
    public var refreshToken: String?
    public init(refreshToken: String?) { self.refreshToken = refreshToken }
    enum CodingKeys: String, CodingKey, CaseIterable { case refreshToken = "refresh_token" }
}

/// `POST /v1/auth/otp/request`
public struct OTPStartRequest: Codable, Sendable, Equatable {
    public var phone: String?
    public init(phone: String?) { self.phone = phone }
    enum CodingKeys: String, CodingKey, CaseIterable { case phone }
}

/// The answer to an OTP request: where the code went and the clocks that govern it.
public struct OTPStartResponse: Codable, Sendable, Equatable {
    /// The number in E.164 form, as the server understood it.
    public var phone: String
    public var expiresIn: Int
    public var resendAfter: Int
    /// The code itself: only in development mode with the log sender.
    public var devCode: String?
    public init(phone: String, expiresIn: Int, resendAfter: Int, devCode: String? = nil) {
        self.phone = phone
        self.expiresIn = expiresIn
        self.resendAfter = resendAfter
        self.devCode = devCode
    }
    enum CodingKeys: String, CodingKey {
        case phone
        case expiresIn = "expires_in"
        case resendAfter = "resend_after"
        case devCode = "dev_code"
    }
}

/// `POST /v1/auth/otp/verify`
public struct OTPVerifyRequest: Codable, Sendable, Equatable {
    public var phone: String?
    public var code: String?
    public init(phone: String?, code: String?) {
        self.phone = phone
        self.code = code
    }
    enum CodingKeys: String, CodingKey, CaseIterable { case phone, code }
}

/// A user as the API shows them to themselves.
/// `GET /v1/admin/users`: a page of users, newest first, and how many match in all.
public struct UserListView: Codable, Sendable, Equatable {
    public var users: [UserView]
    public var total: Int

    public init(users: [UserView], total: Int) {
        self.users = users
        self.total = total
    }
}

public struct UserView: Codable, Sendable, Equatable {
    public var id: String
    public var role: String
    public var fullName: String?
    public var email: String?
    public var phone: String?
    public var language: String
    public var onboardingCompleted: Bool
    /// IANA name; session times in system messages are shown in it.
    public var timeZone: String
    /// Where the avatar is read (`GET`, with a token), or nil without one. The path names the image's digest,
    /// so a new avatar has a new URL and an app may cache each for good.
    public var avatarURL: String?
    /// When the account was erased (Unix seconds); absent for a live account. An erased account is a tombstone: its
    /// id and role stay, its name, email and phone are gone.
    public var erasedAt: Int64?

    public init(id: String, role: String, fullName: String?, email: String?, phone: String?, language: String,
                onboardingCompleted: Bool, timeZone: String = "UTC", avatarURL: String? = nil, erasedAt: Int64? = nil) {
        self.id = id
        self.role = role
        self.fullName = fullName
        self.email = email
        self.phone = phone
        self.language = language
        self.onboardingCompleted = onboardingCompleted
        self.timeZone = timeZone
        self.avatarURL = avatarURL
        self.erasedAt = erasedAt
    }

    /// The avatar path of user `id` whose image has digest `avatar`.
    public static func avatarURL(userID: String, avatar: String?) -> String? {
        avatar.map { "/v1/users/\(userID)/avatar/\($0)" }
    }

    enum CodingKeys: String, CodingKey {
        case id, role, email, phone, language
        case avatarURL = "avatar_url"
        case fullName = "full_name"
        case onboardingCompleted = "onboarding_completed"
        case timeZone = "time_zone"
        case erasedAt = "erased_at"
    }
}

/// A signed-in session: a short-lived access token and a rotating refresh token.
public struct SessionResponse: Codable, Sendable, Equatable {
    public var accessToken: String
    public var tokenType: String
    /// Seconds until the access token expires.
    public var expiresIn: Int
    public var refreshToken: String
    public var user: UserView

    public init(accessToken: String, expiresIn: Int, refreshToken: String, user: UserView) {
        self.accessToken = accessToken
        self.tokenType = "Bearer"
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.user = user
    }

    enum CodingKeys: String, CodingKey {
        case user
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
    }
}

/// `PUT /v1/me`: the profile settings to change (at least one).
public struct ProfileRequest: Codable, Sendable, Equatable {
    public var language: String?
    public var timeZone: String?
    public var fullName: String?
    public init(language: String?, timeZone: String?, fullName: String? = nil) {
        self.language = language
        self.timeZone = timeZone
        self.fullName = fullName
    }
    enum CodingKeys: String, CodingKey, CaseIterable {
        case language
        case timeZone = "time_zone"
        case fullName = "full_name"
    }
}

/// `PUT /v1/me/password`: the current password, and the new one twice. Every other session is signed out.
public struct PasswordChangeRequest: Codable, Sendable, Equatable {
    public var currentPassword: String?
    public var newPassword: String?
    public var newPasswordConfirmation: String?
    public init(currentPassword: String?, newPassword: String?, newPasswordConfirmation: String?) {
        self.currentPassword = currentPassword
        self.newPassword = newPassword
        self.newPasswordConfirmation = newPasswordConfirmation
    }
    enum CodingKeys: String, CodingKey, CaseIterable {
        case currentPassword = "current_password"
        case newPassword = "new_password"
        case newPasswordConfirmation = "new_password_confirmation"
    }
}

/// `POST /v1/me/email`: a new address, and the current password when the account has one.
public struct EmailChangeRequest: Codable, Sendable, Equatable {
    public var email: String?
    public var currentPassword: String?
    public init(email: String?, currentPassword: String?) {
        self.email = email
        self.currentPassword = currentPassword
    }
    enum CodingKeys: String, CodingKey, CaseIterable {
        case email
        case currentPassword = "current_password"
    }
}

/// The answer to `POST /v1/me/email`: a code went to the new address; the account keeps the old one until
/// `POST /v1/me/email/verify` gets that code.
public struct EmailChangeResponse: Codable, Sendable, Equatable {
    /// The new address as the server normalized it.
    public var pendingEmail: String
    public var expiresIn: Int
    public var resendAfter: Int
    /// The code itself: only on a development server with the log sender.
    public var devCode: String?
    public init(pendingEmail: String, expiresIn: Int, resendAfter: Int, devCode: String? = nil) {
        self.pendingEmail = pendingEmail
        self.expiresIn = expiresIn
        self.resendAfter = resendAfter
        self.devCode = devCode
    }
    enum CodingKeys: String, CodingKey {
        case pendingEmail = "pending_email"
        case expiresIn = "expires_in"
        case resendAfter = "resend_after"
        case devCode = "dev_code"
    }
}

/// `POST /v1/me/email/verify`: the code sent to the new address.
public struct EmailVerifyRequest: Codable, Sendable, Equatable {
    public var code: String?
    public init(code: String?) { self.code = code }
    enum CodingKeys: String, CodingKey, CaseIterable { case code }
}

/// `DELETE /v1/me`: the account's password, or for an account without one (phone sign-in) a code asked for with
/// `POST /v1/auth/otp/request` on the account's phone.
public struct EraseAccountRequest: Codable, Sendable, Equatable {
    public var password: String?
    public var code: String?
    /// A fresh Apple or Google ID token of a provider account linked to the user (accounts made by Sign in with
    /// Apple or Google have no password and no phone).
    public var idToken: String?
    public init(password: String? = nil, code: String? = nil, idToken: String? = nil) {
        self.password = password
        self.code = code
        self.idToken = idToken
    }
    enum CodingKeys: String, CodingKey, CaseIterable { case password, code, idToken = "id_token" }
}

/// `PUT /v1/me/language`: `en` or `ar`.
public struct LanguageRequest: Codable, Sendable, Equatable {
    public var language: String?
    public init(language: String?) { self.language = language }
    enum CodingKeys: String, CodingKey, CaseIterable { case language }
}

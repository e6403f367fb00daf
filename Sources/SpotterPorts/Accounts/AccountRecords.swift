import FoundationEssentials
import SpotterProtocol

/// A row of `user`. `role` is "client", "coach" or "admin"; `language` a wire language code ("en", "ar").
public struct UserRecord: Sendable, Equatable {
    public var id: String
    public var role: String
    public var fullName: String?
    public var email: String?
    public var phone: String?
    /// The scrypt encoding, or nil for phone-only accounts.
    public var passwordHash: String?
    public var language: String
    public var onboardingCompleted: Bool
    public var createdAt: Int64
    /// An IANA time zone name ("Asia/Riyadh"), "UTC" unless the user chose one.
    public var timeZone: String
    /// A client's subscription tier (`freemium`, `premium`, `smart_premium`); it only counts with `--tiers`.
    public var tier: String
    /// The SHA-256 (hex) of the user's avatar image, or nil.
    public var avatar: String?
    /// When the account was erased (Unix seconds), or nil: an erased user's row is a tombstone (id, role, this),
    /// kept so that the threads and sessions naming the id still resolve.
    public var erasedAt: Int64?

    public init(id: String, role: String, fullName: String?, email: String?, phone: String?, passwordHash: String?,
                language: String, onboardingCompleted: Bool, createdAt: Int64, timeZone: String = "UTC",
                tier: String = "freemium", avatar: String? = nil, erasedAt: Int64? = nil) {
        self.id = id
        self.role = role
        self.fullName = fullName
        self.email = email
        self.phone = phone
        self.passwordHash = passwordHash
        self.language = language
        self.onboardingCompleted = onboardingCompleted
        self.createdAt = createdAt
        self.timeZone = timeZone
        self.tier = tier
        self.avatar = avatar
        self.erasedAt = erasedAt
    }

    init(row: SQLRow) {
        self.init(id: row["id"], role: row["role"], fullName: row["fullName"], email: row["email"], phone: row["phone"],
                  passwordHash: row["passwordHash"], language: row["language"],
                  onboardingCompleted: row["onboardingCompleted"], createdAt: row["createdAt"], timeZone: row["timeZone"],
                  tier: row["tier"], avatar: row["avatar"], erasedAt: row["erasedAt"])
    }
}

/// Why an account operation was refused. Database failures are thrown as GRDB's own errors.
public enum AccountStoreError: Error, Sendable, Equatable {
    case emailTaken
    case phoneTaken
    case notFound
    /// A state conflict; the string is a stable reason such as "already_linked", "no_coach",
    /// "pending", "same_coach" or "not_pending".
    case conflict(String)
    /// A coach's erasure while `count` clients are linked to them.
    case coachHasClients(count: Int)
}

extension ClientProfileView {
    /// A row of `clientProfile`. The age is not stored (it changes with the day): nil here, the reader fills it.
    init(row: SQLRow) {
        self.init(clientId: row["userId"], dateOfBirth: row["dateOfBirth"], age: nil, gender: row["gender"],
                  heightCm: row["heightCm"], weightKg: row["weightKg"], goal: row["goal"],
                  experienceLevel: row["experienceLevel"],
                  dietaryRestrictions: JSONList.decode(row["dietaryRestrictions"]),
                  medicalConditions: JSONList.decode(row["medicalConditions"]),
                  workoutLocation: row["workoutLocation"], workoutFrequency: row["workoutFrequency"],
                  injuries: JSONList.decode(row["injuries"]))
    }
}

/// One of a coach's clients, with what the coach's client list shows.
public struct ClientListing: Sendable, Equatable {
    public var clientId: String
    public var fullName: String?
    public var goal: String?
    public var experienceLevel: String?
    public var dateOfBirth: String?
    /// The most recently recorded weight, nil before onboarding.
    public var latestWeightKg: Double?
    /// The coach–client thread.
    public var threadId: String

    public init(clientId: String, fullName: String?, goal: String?, experienceLevel: String?, dateOfBirth: String?,
                latestWeightKg: Double?, threadId: String) {
        self.clientId = clientId
        self.fullName = fullName
        self.goal = goal
        self.experienceLevel = experienceLevel
        self.dateOfBirth = dateOfBirth
        self.latestWeightKg = latestWeightKg
        self.threadId = threadId
    }
}

extension ChangeRequestView {
    /// A row of `coachChangeRequest`, with the people's names when the query joined them (`clientName`,
    /// `fromCoachName`, `toCoachName`). Who decided (`decidedBy`) stays in the table: nothing shows it.
    init(row: SQLRow, withNames: Bool = false) {
        self.init(id: row["id"], clientId: row["clientId"], fromCoachId: row["fromCoachId"], toCoachId: row["toCoachId"],
                  reason: row["reason"], status: row["status"], createdAt: row["createdAt"], decidedAt: row["decidedAt"],
                  clientName: withNames ? row["clientName"] : nil, fromCoachName: withNames ? row["fromCoachName"] : nil,
                  toCoachName: withNames ? row["toCoachName"] : nil)
    }
}

/// The result of presenting a refresh token.
public enum RefreshOutcome: Sendable, Equatable {
    /// The old token is marked rotated and the new one stored in the same family.
    case rotated(userID: String, familyID: String)
    /// The token had already been rotated: a copy is in someone else's hands. The whole family is now revoked.
    case reused(userID: String, familyID: String)
    /// Unknown, expired or revoked.
    case invalid
    /// The token belongs to another user than the one who must own it: nothing was changed.
    case foreign
}

/// A session (refresh-token family) that was revoked, and when.
public struct RevokedSession: Sendable, Equatable {
    public var userID: String
    public var familyID: String
    public var revokedAt: Int64
    public init(userID: String, familyID: String, revokedAt: Int64) {
        self.userID = userID
        self.familyID = familyID
        self.revokedAt = revokedAt
    }
}

/// String lists stored as JSON arrays in TEXT columns.
enum JSONList {
    static func encode(_ list: [String]) -> String {
        guard let data = try? JSONEncoder().encode(list) else { return "[]" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A stored list; an unreadable value reads as empty rather than failing the whole row.
    static func decode(_ text: String?) -> [String] {
        guard let text, let list = try? JSONDecoder().decode([String].self, from: Data(text.utf8)) else { return [] }
        return list
    }
}

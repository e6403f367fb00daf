import FoundationEssentials
import SpotterCore
import SpotterPorts
import SpotterProtocol

/// The export's JSON documents: each one a table (or a view of the log) about the user, read off the loop. What
/// is left out, and why, is in Protocol/README.md's "Export" (secrets such as the password's hash; other people's
/// data; the server's own bookkeeping).
extension ExportCursor {
    /// (name, JSON) of every document before the messages, in archive order.
    func documents() throws -> [(String, String)] {
        let accounts = sources.accounts, userID = snapshot.userID
        guard let user = try accounts.user(id: userID) else { throw AccountStoreError.notFound }
        let pending = try accounts.emailChange(userID: userID)
        let profile = ProfileDocument(
            user: user.view, createdAt: user.createdAt, tier: user.role == "client" ? user.tier : nil,
            avatar: user.avatar, lastSeenAt: try accounts.lastSeenAt(userID: userID),
            pendingEmailChange: pending.map { PendingEmail(email: $0.email, issuedAt: $0.issuedAt) },
            aiGenerations: try accounts.aiQuotaCounter(userID: userID))
        let onboarding = OnboardingDocument(profile: try accounts.clientProfile(userID: userID),
                                            weights: try accounts.weightEntries(clientID: userID))
        let coaching = CoachingDocument(
            link: user.role == "client" ? try accounts.link(clientID: userID) : nil,
            changeRequests: try accounts.changeRequests(ofClient: userID))
        let devices = try accounts.devices(userID: userID).map(DeviceDocument.init)
        let notifications = try accounts.notificationPreferences(userID: userID)
            .settings(timeZone: TimeZoneRules.shownName(user.timeZone), now: sources.now)
        let ratings = try accounts.ratings(involving: userID).map { RatingDocument($0, userID: userID) }
        let availability = user.role == "coach" ? try accounts.availability(coachID: userID) : nil
        let encode = { (value: any Encodable) in JSONText.encoder.encodeToString(value) + "\n" }
        return [
            ("profile.json", encode(profile)),
            ("onboarding.json", encode(onboarding)),
            ("sign-ins.json", encode(SignInsDocument(sessions: try accounts.signInSessions(userID: userID),
                                                     identities: try accounts.identityLinks(userID: userID)))),
            ("devices.json", encode(["devices": devices])),
            ("notifications.json", encode(notifications)),
            ("availability.json", encode(AvailabilityReply(availability: availability))),
            ("coaching.json", encode(coaching)),
            ("ratings.json", encode(["ratings": ratings])),
            ("threads.json", encode(["threads": snapshot.threads])),
            ("sessions.json", encode(["sessions": snapshot.sessions])),
            ("record.json", encode(RecordDocument(record: snapshot.record))),
        ]
    }
}

/// `sign-ins.json`: the sessions, and the Apple and Google accounts that sign the user in.
struct SignInsDocument: Encodable {
    var sessions: [AccountStore.SignInSession]
    var identities: [AccountStore.IdentityLink]
}

struct PendingEmail: Encodable {
    var email: String
    var issuedAt: Int64
    enum CodingKeys: String, CodingKey { case email, issuedAt = "issued_at" }
}

/// `profile.json`: the account as `GET /v1/me` shows it, and what only the server kept (no password hash).
struct ProfileDocument: Encodable {
    var user: UserView
    var createdAt: Int64
    var tier: String?
    var avatar: String?
    var lastSeenAt: Int64?
    var pendingEmailChange: PendingEmail?
    /// The AI-generation counter (`aiQuota`), if the user ever consumed one.
    var aiGenerations: AccountStore.AIQuotaCounter?
    enum CodingKeys: String, CodingKey {
        case user, tier, avatar
        case aiGenerations = "ai_generations"
        case createdAt = "created_at", lastSeenAt = "last_seen_at", pendingEmailChange = "pending_email_change"
    }
}

/// `onboarding.json`: a client's answers and the weights recorded with them.
struct OnboardingDocument: Encodable {
    var profile: ClientProfileView?
    var weights: [AccountStore.WeightEntry]
}

/// `coaching.json`: a client's current coach and their requests to change coach.
struct CoachingDocument: Encodable {
    var link: LinkView?
    var changeRequests: [ChangeRequestView]
    enum CodingKeys: String, CodingKey { case link, changeRequests = "change_requests" }
}

/// `record.json`: a client's coaching record; null for a coach or an admin.
struct RecordDocument: Encodable {
    var record: ExportSnapshot.Record?
}

/// A push device in `devices.json`. Its address is not exported, only the address's SHA-256: a device token (or a Web
/// Push endpoint with its keys) lets whoever holds it send notifications to that device, and an export is a file
/// that travels; the digest still lets the owner tell which of their devices it is.
struct DeviceDocument: Encodable {
    var id: String
    var platform: String
    var topic: String?
    var environment: String?
    var addressSHA256: String
    var sessionID: String
    var createdAt: Int64
    var registeredAt: Int64
    enum CodingKeys: String, CodingKey {
        case id, platform, topic, environment
        case addressSHA256 = "address_sha256", sessionID = "session_id", createdAt = "created_at", registeredAt = "registered_at"
    }

    init(_ device: DeviceRecord) {
        id = device.id
        platform = device.address.platform.rawValue
        topic = device.address.topic
        environment = device.address.environment
        addressSHA256 = Digest.sha256Hex(device.address.token)
        sessionID = device.sessionID
        createdAt = device.createdAt
        registeredAt = device.registeredAt
    }
}

/// A rating in `ratings.json`: `given` by this client, or `received` by this coach.
struct RatingDocument: Encodable {
    var direction: String
    var coachID: String
    var clientID: String
    var stars: Int?
    var feedback: String?
    var sessionID: String?
    var createdAt: Int64
    enum CodingKeys: String, CodingKey {
        case direction, stars, feedback
        case coachID = "coach_id", clientID = "client_id", sessionID = "session_id", createdAt = "created_at"
    }

    init(_ rating: RatingRecord, userID: String) {
        direction = rating.clientId == userID ? "given" : "received"
        coachID = rating.coachId
        clientID = rating.clientId
        stars = rating.stars
        feedback = rating.feedback
        sessionID = rating.sessionId
        createdAt = rating.createdAt
    }
}

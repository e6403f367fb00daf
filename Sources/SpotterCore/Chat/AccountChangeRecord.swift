import FoundationEssentials
import SpotterProtocol

/// An account changed in a way every process of a cluster must follow (`ChatRecord.Kind.account`): sessions were
/// revoked (a sign-out, a reused refresh token, a password change), or the profile others read changed (name,
/// language, time zone, tier). Logged once, on no thread (thread number 0, side coach, seq 0), after the accounts'
/// transaction committed: the accounts' tables are the truth, the record only tells the other processes, which
/// keep copies in memory (revoked sessions, the user directory, the names in thread lists).
///
/// It makes no event: nothing of it goes on the wire, `resume` replays nothing for it, pushes, webhooks and
/// exports skip it. An erasure forgets what a profile record of the user holds (`MessageForgetting.erase`).
public struct AccountChangeRecord: Sendable, Equatable {
    public enum Change: Sendable, Equatable {
        /// These sessions (refresh-token families) were revoked at `revokedAt` (seconds): their access tokens are
        /// refused and their sockets closed with 4003.
        case sessionsRevoked(familyIDs: [String], revokedAt: Int64)
        /// The profile as the accounts' transaction committed it; a nil field did not change.
        case profile(AccountProfile)
    }

    public var userID: String
    public var change: Change

    public init(userID: String, _ change: Change) {
        self.userID = userID
        self.change = change
    }

    public var revokedFamilies: [String] {
        if case .sessionsRevoked(let families, _) = change { families } else { [] }
    }

    public var profile: AccountProfile? {
        if case .profile(let profile) = change { profile } else { nil }
    }
}

/// What other processes keep of a user's profile: nil fields are unchanged.
public struct AccountProfile: Sendable, Equatable, Codable {
    public var fullName: String?
    /// A `Language` raw value.
    public var language: String?
    /// An IANA zone name.
    public var timeZone: String?
    /// A stored tier name (clients).
    public var tier: String?

    public init(fullName: String? = nil, language: String? = nil, timeZone: String? = nil, tier: String? = nil) {
        self.fullName = fullName
        self.language = language
        self.timeZone = timeZone
        self.tier = tier
    }

    enum CodingKeys: String, CodingKey {
        case fullName = "full_name"
        case language
        case timeZone = "time_zone"
        case tier
    }

    public var isEmpty: Bool { fullName == nil && language == nil && timeZone == nil && tier == nil }
}

extension AccountChangeRecord {
    /// `a` of an account record: which change it is (`ChatRecord+Columns.swift`).
    public static let revokedSessionsColumn: Int64 = 1
    public static let profileColumn: Int64 = 2

    /// The stored columns: `a` the change, `b` a revocation's time, `ref` the user, `body` the families (a JSON
    /// array) or the profile (a JSON object).
    var columns: ChatRecord.Columns {
        let kind = ChatRecord.Kind.account.rawValue
        switch change {
        case .sessionsRevoked(let families, let revokedAt):
            return ChatRecord.Columns(kind: kind, a: Self.revokedSessionsColumn, b: revokedAt, ref: userID,
                                      body: JSONText.encoder.encodeToString(families))
        case .profile(let profile):
            return ChatRecord.Columns(kind: kind, a: Self.profileColumn, ref: userID, body: JSONText.encoder.encodeToString(profile))
        }
    }

    /// The record a row holds; nil for a change this version does not know (a newer server's `a`), kept as
    /// `unknown`. A body that does not decode (forgotten by an erasure: NULL) reads as no families / no field.
    init?(columns: ChatRecord.Columns) {
        let userID = columns.ref ?? ""
        let body = Data((columns.body ?? "").utf8)
        switch columns.a {
        case Self.revokedSessionsColumn:
            let families = (try? JSONDecoder().decode([String].self, from: body)) ?? []
            self.init(userID: userID, .sessionsRevoked(familyIDs: families, revokedAt: columns.b))
        case Self.profileColumn:
            self.init(userID: userID, .profile((try? JSONDecoder().decode(AccountProfile.self, from: body)) ?? AccountProfile()))
        default:
            return nil
        }
    }
}

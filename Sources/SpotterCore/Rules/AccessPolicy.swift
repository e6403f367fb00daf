/// The three kinds of account. Raw values are the wire and database spellings and never change.
public enum Role: String, Sendable, Codable, CaseIterable {
    /// A person being coached.
    case client
    /// A personal trainer with linked clients.
    case coach
    /// A system administrator (decides coach change requests).
    case admin
}

/// The authenticated party making a request, as established from a verified access token.
public struct Actor: Sendable, Equatable {
    /// The user id (the token's subject).
    public var userID: String
    /// The account's role.
    public var role: Role

    public init(userID: String, role: Role) {
        self.userID = userID
        self.role = role
    }
}

/// Who may do what.
///
/// Guarantees: pure and total; the caller looks up the relationship facts (e.g. the owner's linked coach)
/// and passes them in, so the same facts always give the same answer. Everything not explicitly allowed
/// is denied; an empty user id never matches anything.
public enum AccessPolicy {
    /// Reading the avatar of `ownerID`: a coach's is seen by anyone signed in (clients choose a coach from the
    /// list of coaches); anyone else's as their other data is (`canAccessClientData`).
    public static func canSeeAvatar(_ actor: Actor, ownerID: String, ownerRole: Role, ownerCoachID: String?) -> Bool {
        guard !actor.userID.isEmpty else { return false }
        return ownerRole == .coach || canAccessClientData(actor, ownerID: ownerID, ownerCoachID: ownerCoachID)
    }

    /// Reading or writing data that belongs to `ownerID` (a client's profile, their thread, …).
    /// Allowed: the owner themself; any admin; a coach whose id equals `ownerCoachID` (the owner's
    /// linked coach). Denied: other coaches, other clients, and a coach when the owner has no coach.
    public static func canAccessClientData(_ actor: Actor, ownerID: String, ownerCoachID: String?) -> Bool {
        guard !actor.userID.isEmpty else { return false }
        if actor.userID == ownerID { return true }
        switch actor.role {
        case .admin:
            return true
        case .coach:
            return ownerCoachID == actor.userID
        case .client:
            return false
        }
    }

    /// Completing onboarding, picking a coach, requesting a coach change: clients only.
    public static func canActAsClient(_ actor: Actor) -> Bool {
        !actor.userID.isEmpty && actor.role == .client
    }

    /// Listing one's own clients: coaches only.
    public static func canListOwnClients(_ actor: Actor) -> Bool {
        !actor.userID.isEmpty && actor.role == .coach
    }

    /// Listing, approving and rejecting coach change requests: admins only.
    public static func canAdminister(_ actor: Actor) -> Bool {
        !actor.userID.isEmpty && actor.role == .admin
    }
}

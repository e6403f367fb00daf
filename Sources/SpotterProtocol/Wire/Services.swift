#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The server-to-server API: the app's other services (a workout planner, a tracker) post system messages into a
// thread with an API key an admin made.

/// `POST /v1/admin/api-keys`: a name for the key (1–100 characters), so admins know which service holds it.
/// `scopes`: what the key may do besides posting system messages — `tier` (set clients' tiers, for billing); none
/// by default.
public struct APIKeyRequest: Codable, Sendable, Equatable {
    public var name: String?
    public var scopes: [String]?
    public init(name: String?, scopes: [String]? = nil) {
        self.name = name
        self.scopes = scopes
    }
    enum CodingKeys: String, CodingKey, CaseIterable { case name, scopes }
}

/// A key as admins see it; `key` only in the answer that made it (it is not stored, only its SHA-256).
public struct APIKeyView: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var key: String?
    public var createdBy: String
    public var createdAt: Int64
    public var revokedAt: Int64?
    public var scopes: [String]
    public init(id: String, name: String, key: String?, createdBy: String, createdAt: Int64, revokedAt: Int64?,
                scopes: [String] = []) {
        self.scopes = scopes
        self.id = id
        self.name = name
        self.key = key
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
    enum CodingKeys: String, CodingKey {
        case id, name, key, scopes
        case createdBy = "created_by"
        case createdAt = "created_at"
        case revokedAt = "revoked_at"
    }
}

public struct APIKeyList: Codable, Sendable, Equatable {
    public var keys: [APIKeyView]
    public init(keys: [APIKeyView]) { self.keys = keys }
}

/// `POST /v1/threads/{id}/system-messages` (a service, with an API key): a system message in the thread, on the
/// side of `side` (`client`, the default: the coach gets it unread; or `coach`), idempotent by
/// `client_message_id` (a retry returns the original).
public struct SystemMessageRequest: Codable, Sendable, Equatable {
    public var clientMessageId: String?
    public var text: String?
    public var side: String?
    public init(clientMessageId: String?, text: String?, side: String?) {
        self.clientMessageId = clientMessageId
        self.text = text
        self.side = side
    }
    enum CodingKeys: String, CodingKey, CaseIterable {
        case text, side
        case clientMessageId = "client_message_id"
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Outbound webhooks (issue 29): admins register endpoints that the server POSTs signed events to
// (Protocol/README.md, "Webhooks").

/// `POST /v1/admin/webhooks`.
public struct WebhookEndpointRequest: Codable, Sendable, Equatable, KnownFields {
    public var url: String?
    public var events: [String]?
    public init(url: String?, events: [String]?) {
        self.url = url
        self.events = events
    }
    enum CodingKeys: String, CodingKey, CaseIterable { case url, events }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

/// An endpoint as admins see it; `secret` only in the answers that made it or rotated it.
public struct WebhookView: Codable, Sendable, Equatable {
    public var id: String
    public var url: String
    public var events: [String]
    public var secret: String?
    public var createdBy: String
    public var createdAt: Int64
    public init(id: String, url: String, events: [String], secret: String?, createdBy: String, createdAt: Int64) {
        self.id = id
        self.url = url
        self.events = events
        self.secret = secret
        self.createdBy = createdBy
        self.createdAt = createdAt
    }
    enum CodingKeys: String, CodingKey {
        case id, url, events, secret
        case createdBy = "created_by"
        case createdAt = "created_at"
    }
}

public struct WebhookList: Codable, Sendable, Equatable {
    public var webhooks: [WebhookView]
    public init(webhooks: [WebhookView]) { self.webhooks = webhooks }
}

/// A delivery given up (`GET /v1/admin/webhooks/{id}/dead-letters`): the event as it would be sent, how often it
/// was tried and the last failure.
public struct DeadLetterView: Codable, Sendable, Equatable {
    public var eventId: String
    public var type: String
    /// The event's JSON body, as sent.
    public var payload: String
    public var attempts: Int
    public var lastError: String?
    /// When it was queued and given up (Unix milliseconds).
    public var queuedAt: Int64
    public var deadAt: Int64?
    public init(eventId: String, type: String, payload: String, attempts: Int, lastError: String?, queuedAt: Int64, deadAt: Int64?) {
        self.eventId = eventId
        self.type = type
        self.payload = payload
        self.attempts = attempts
        self.lastError = lastError
        self.queuedAt = queuedAt
        self.deadAt = deadAt
    }
    enum CodingKeys: String, CodingKey {
        case type, payload, attempts
        case eventId = "event_id"
        case lastError = "last_error"
        case queuedAt = "queued_at"
        case deadAt = "dead_at"
    }
}

public struct DeadLetterList: Codable, Sendable, Equatable {
    public var deadLetters: [DeadLetterView]
    public init(deadLetters: [DeadLetterView]) { self.deadLetters = deadLetters }
    enum CodingKeys: String, CodingKey { case deadLetters = "dead_letters" }
}

/// `POST /v1/admin/webhooks/{id}/dead-letters/replay`: the dead letters of `event_ids` (absent: all of them) go
/// again, with their event ids.
public struct ReplayRequest: Codable, Sendable, Equatable, KnownFields {
    public var eventIds: [String]?
    public init(eventIds: [String]?) { self.eventIds = eventIds }
    enum CodingKeys: String, CodingKey, CaseIterable { case eventIds = "event_ids" }
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

public struct ReplayView: Codable, Sendable, Equatable {
    public var replayed: Int
    public init(replayed: Int) { self.replayed = replayed }
}

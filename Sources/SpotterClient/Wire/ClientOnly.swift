import Foundation

// The client's own wire types: what the server has no type for (the tokens an app keeps, the body of a send). The
// rest is the server's (Shared.swift). README.md, "Wire types".

/// The two tokens of a session. Keep them in the Keychain: this client never writes them to its persistence.
public struct Tokens: Sendable, Hashable {
    public var accessToken: String
    public var refreshToken: String
    public init(accessToken: String, refreshToken: String) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
    }
}

/// What a send carries: a text, or a meal card (`MealLog`, as JSON).
public enum MessageBody: Sendable, Hashable, Codable {
    case text(String)
    case meal(JSONValue)

    var fields: [String: JSONValue] {
        switch self {
        case .text(let text): ["text": .string(text)]
        case .meal(let meal): ["kind": "meal_log", "meal": meal]
        }
    }
}

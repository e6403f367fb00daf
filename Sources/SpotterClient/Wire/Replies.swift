import Foundation

// The replies' parts the server has no Codable type for (it writes `resume`'s result by hand), what the client
// sends to register a device, and the envelope it reads first. The typed results are the server's (Shared.swift).

/// `resume`: how many events were replayed, up to which cursor.
public struct ResumeResult: Codable, Sendable, Hashable {
    public var cursor: Int
    public var replayed: Int
}

/// What `POST /v1/me/devices` registers (Protocol/README "Devices").
public enum DeviceRegistration: Sendable, Hashable {
    /// An APNs token in hex, the app's bundle id, and `production` or `sandbox`.
    case apns(token: String, topic: String, environment: String)
    /// A Firebase Cloud Messaging registration token.
    case fcm(token: String)

    var body: JSONValue {
        switch self {
        case .apns(let token, let topic, let environment):
            ["platform": "apns", "token": .string(token), "topic": .string(topic), "environment": .string(environment)]
        case .fcm(let token):
            ["platform": "fcm", "token": .string(token)]
        }
    }
}

/// A reply frame: `result` when `ok`, else `error`.
struct ReplyFrame<Result: Decodable>: Decodable {
    var type: String
    var id: String?
    var ok: Bool
    var result: Result?
    var error: SpotterError?
}

/// What every server frame has in common: its type, and a cursor when it is logged, an id when it is a reply.
struct FrameHead: Decodable {
    var type: String
    var id: String?
    var ok: Bool?
    var cursor: Int?
}

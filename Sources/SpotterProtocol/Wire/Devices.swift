#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Push devices (issue 28): where the server may push to a person whose app holds no socket. One body registers one
// device of one platform; the fields of the other platforms are refused (`unknown_field`). The limits are
// `DeviceRules`' (SpotterCore) and Protocol/README.md's "Devices".

/// `POST /v1/me/devices`. One of:
/// - `{"platform":"apns","token":"<hex>","topic":"<bundle id>","environment":"production"|"sandbox"}`
/// - `{"platform":"fcm","token":"…"}`
/// - `{"platform":"webpush","subscription":{"endpoint":"https://…","keys":{"p256dh":"…","auth":"…"}}}`, the
///   subscription as the browser's `PushSubscription.toJSON()` gives it (its `expirationTime` is accepted).
public struct DeviceRequest: Codable, Sendable, Equatable {
    public var platform: String?
    public var token: String?
    public var topic: String?
    public var environment: String?
    public var subscription: PushSubscriptionBody?
    public init(platform: String?, token: String? = nil, topic: String? = nil, environment: String? = nil,
                subscription: PushSubscriptionBody? = nil) {
        self.platform = platform
        self.token = token
        self.topic = topic
        self.environment = environment
        self.subscription = subscription
    }
    enum CodingKeys: String, CodingKey, CaseIterable { case platform, token, topic, environment, subscription }
}

/// A browser's push subscription, in the shape of `PushSubscription.toJSON()` (hence `expirationTime`, camelCase as
/// the browser writes it: a number of milliseconds or null, accepted and not used).
public struct PushSubscriptionBody: Codable, Sendable, Equatable {
    public var endpoint: String?
    public var expirationTime: Double?
    public var keys: PushSubscriptionKeys?
    public init(endpoint: String?, expirationTime: Double? = nil, keys: PushSubscriptionKeys?) {
        self.endpoint = endpoint
        self.expirationTime = expirationTime
        self.keys = keys
    }
    enum CodingKeys: String, CodingKey, CaseIterable { case endpoint, expirationTime, keys }
}

/// The subscription's keys (RFC 8291): the browser's P-256 public key and its authentication secret, base64url.
public struct PushSubscriptionKeys: Codable, Sendable, Equatable {
    public var p256dh: String?
    public var auth: String?
    public init(p256dh: String?, auth: String?) {
        self.p256dh = p256dh
        self.auth = auth
    }
    enum CodingKeys: String, CodingKey, CaseIterable { case p256dh, auth }
}

/// A registered device as its owner sees it: no token, key or endpoint comes back (they are the app's to know).
/// `topic` and `environment` for APNs only.
public struct DeviceView: Codable, Sendable, Equatable {
    public var id: String
    public var platform: String
    public var topic: String?
    public var environment: String?
    /// When this account first registered the device (Unix seconds).
    public var createdAt: Int64
    /// When it was last registered (an app registers again at each launch); the oldest by this goes first.
    public var registeredAt: Int64
    public init(id: String, platform: String, topic: String?, environment: String?, createdAt: Int64, registeredAt: Int64) {
        self.id = id
        self.platform = platform
        self.topic = topic
        self.environment = environment
        self.createdAt = createdAt
        self.registeredAt = registeredAt
    }
    enum CodingKeys: String, CodingKey {
        case id, platform, topic, environment
        case createdAt = "created_at"
        case registeredAt = "registered_at"
    }
}

/// `GET /v1/me/devices`: the caller's devices, the most recently registered first.
public struct DeviceList: Codable, Sendable, Equatable {
    public var devices: [DeviceView]
    public init(devices: [DeviceView]) { self.devices = devices }
}

extension DeviceRequest: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
    public static var nestedObjects: [String: any KnownFields.Type] { ["subscription": PushSubscriptionBody.self] }
}
extension PushSubscriptionBody: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
    public static var nestedObjects: [String: any KnownFields.Type] { ["keys": PushSubscriptionKeys.self] }
}
extension PushSubscriptionKeys: KnownFields {
    public static let fieldNames = Set(CodingKeys.allCases.map(\.stringValue))
}

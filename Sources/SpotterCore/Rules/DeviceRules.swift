import Base64Codec
import SpotterProtocol

/// Where a push reaches one app: a device's APNs or FCM token, or a browser's Web Push subscription, checked.
/// `token` identifies it on its platform (a device registered again, by anyone, is the same address).
public struct PushAddress: Sendable, Hashable {
    public enum Platform: String, Sendable, CaseIterable {
        case apns, fcm, webpush
    }

    public var platform: Platform
    /// APNs: the device token, lower-case hex. FCM: the registration token. Web Push: the endpoint URL.
    public var token: String
    /// APNs: the app's bundle id, the `apns-topic` of its pushes.
    public var topic: String?
    /// APNs: `production` or `sandbox` (a development build's tokens work only with Apple's sandbox).
    public var environment: String?
    /// Web Push: the browser's P-256 public key and authentication secret (RFC 8291), base64url without padding.
    public var p256dh: String?
    public var auth: String?

    public init(platform: Platform, token: String, topic: String? = nil, environment: String? = nil,
                p256dh: String? = nil, auth: String? = nil) {
        self.platform = platform
        self.token = token
        self.topic = topic
        self.environment = environment
        self.p256dh = p256dh
        self.auth = auth
    }
}

/// What a push device registration may be (`POST /v1/me/devices`), and how many a user keeps.
///
/// Guarantees: pure (OpenSSL checks the Web Push key; no clock, no I/O); every refusal is an `APIError` naming the
/// wire field (`token`, `subscription.keys.p256dh`, …); every string is bounded before it is looked at further.
public enum DeviceRules {
    /// Devices a user keeps: registering one more removes the one registered least recently. Ten covers a phone, a
    /// tablet, a watch's phone and several browsers, and bounds the pushes one message can cause.
    public static let maxDevicesPerUser = 10
    /// An APNs device token in hex digits: 32 bytes today (64 digits); Apple says they may grow, so up to 100 bytes.
    public static let apnsTokenDigits = 64...200
    /// An FCM registration token's bytes: they are about 160 today and Firebase documents no maximum; 2,048 leaves
    /// room and keeps the unique index on (platform, token) within PostgreSQL's bound on an index entry (2,704 bytes).
    public static let maxFCMTokenBytes = 2048
    /// An APNs topic (a bundle id, possibly with `.voip` or `.complication`): Apple's limit for a bundle id.
    public static let maxTopicBytes = 255
    /// A Web Push endpoint's bytes: push services' URLs are a few hundred; this bounds what is stored and sent.
    public static let maxEndpointBytes = 2048
    /// The Web Push authentication secret's bytes (RFC 8291 §3.2).
    public static let authSecretBytes = 16

    /// The address `request` registers. `allowLoopbackHTTP` (`--development`) also accepts `http://` endpoints on
    /// 127.0.0.1, [::1] and localhost, and https endpoints on addresses, for a local test receiver.
    public static func check(_ request: DeviceRequest, allowLoopbackHTTP: Bool) throws(APIError) -> PushAddress {
        guard let raw = request.platform else { throw APIError(.missingField, field: "platform") }
        guard let platform = PushAddress.Platform(rawValue: raw) else { throw APIError(.badRequest, field: "platform") }
        switch platform {
        case .apns:
            if request.subscription != nil { throw APIError(.unknownField, field: "subscription") }
            let token = try apnsToken(request.token)
            guard let rawTopic = request.topic else { throw APIError(.missingField, field: "topic") }
            guard let rawEnvironment = request.environment else { throw APIError(.missingField, field: "environment") }
            guard ["production", "sandbox"].contains(rawEnvironment) else { throw APIError(.badRequest, field: "environment") }
            return PushAddress(platform: .apns, token: token, topic: try topic(rawTopic), environment: rawEnvironment)
        case .fcm:
            for (field, value) in [("topic", request.topic), ("environment", request.environment)] where value != nil {
                throw APIError(.unknownField, field: field)
            }
            if request.subscription != nil { throw APIError(.unknownField, field: "subscription") }
            return PushAddress(platform: .fcm, token: try fcmToken(request.token))
        case .webpush:
            for (field, value) in [("token", request.token), ("topic", request.topic), ("environment", request.environment)]
            where value != nil {
                throw APIError(.unknownField, field: field)
            }
            guard let subscription = request.subscription else { throw APIError(.missingField, field: "subscription") }
            guard let rawEndpoint = subscription.endpoint else { throw APIError(.missingField, field: "subscription.endpoint") }
            let endpoint = try endpoint(rawEndpoint, allowLoopbackHTTP: allowLoopbackHTTP)
            guard let keys = subscription.keys else { throw APIError(.missingField, field: "subscription.keys") }
            let (p256dh, auth) = try self.keys(keys)
            return PushAddress(platform: .webpush, token: endpoint, p256dh: p256dh, auth: auth)
        }
    }

    /// 64–200 hex digits, an even number (whole bytes), either case; saved in lower case.
    static func apnsToken(_ raw: String?) throws(APIError) -> String {
        guard let raw, !raw.isEmpty else { throw APIError(.missingField, field: "token") }
        let bytes = raw.utf8
        guard apnsTokenDigits.contains(bytes.count), bytes.count % 2 == 0, bytes.allSatisfy(isHexDigit) else {
            throw APIError(.invalidDeviceToken, field: "token")
        }
        return raw.lowercased()
    }

    /// 1–2,048 bytes of printable ASCII (no space, no control character): what FCM tokens are made of, and nothing
    /// that could split a header or a log line.
    static func fcmToken(_ raw: String?) throws(APIError) -> String {
        guard let raw, !raw.isEmpty else { throw APIError(.missingField, field: "token") }
        guard raw.utf8.count <= maxFCMTokenBytes, raw.utf8.allSatisfy(isVisibleASCII) else {
            throw APIError(.invalidDeviceToken, field: "token")
        }
        return raw
    }

    /// A bundle id: 1–255 bytes of ASCII letters, digits and `-`, in dot-separated parts none of them empty.
    static func topic(_ raw: String) throws(APIError) -> String {
        let parts = raw.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard !raw.isEmpty, raw.utf8.count <= maxTopicBytes,
              parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") } })
        else { throw APIError(.badRequest, field: "topic") }
        return raw
    }

    /// The browser's keys, re-encoded as base64url without padding (their one spelling). Padding is accepted on the
    /// way in; the standard alphabet is not (`PushSubscription.toJSON()` never writes it).
    static func keys(_ keys: PushSubscriptionKeys) throws(APIError) -> (p256dh: String, auth: String) {
        guard let rawKey = keys.p256dh, !rawKey.isEmpty else { throw APIError(.missingField, field: "subscription.keys.p256dh") }
        guard let rawAuth = keys.auth, !rawAuth.isEmpty else { throw APIError(.missingField, field: "subscription.keys.auth") }
        guard let key = base64url(rawKey, maxBytes: P256.uncompressedPointLength), P256.isPublicKey(key) else {
            throw APIError(.invalidPushKeys, field: "subscription.keys.p256dh")
        }
        guard let auth = base64url(rawAuth, maxBytes: authSecretBytes), auth.count == authSecretBytes else {
            throw APIError(.invalidPushKeys, field: "subscription.keys.auth")
        }
        return (Base64.encode(key, alphabet: .url), Base64.encode(auth, alphabet: .url))
    }

    /// Decodes base64url, padded or not, refusing text longer than `maxBytes` could encode before decoding it.
    private static func base64url(_ text: String, maxBytes: Int) -> [UInt8]? {
        guard text.utf8.count <= (maxBytes + 2) / 3 * 4 else { return nil }
        return Base64.decode(Substring(text), alphabet: .url, padded: text.utf8.last == UInt8(ascii: "="))
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    static func isVisibleASCII(_ byte: UInt8) -> Bool { (0x21...0x7E).contains(byte) }
}

import SpotterCore
import SpotterPorts

/// A push as APNs wants it, and APNs' answer as an outcome: pure (no clock, no socket), so the tests check every
/// byte. Apple's "Sending notification requests to APNs" and "Generating a remote notification".
public enum APNsEncoding {
    public static let productionURL = "https://api.push.apple.com"
    public static let sandboxURL = "https://api.sandbox.push.apple.com"
    /// Apple's limit on a notification's payload.
    public static let maxPayloadBytes = 4096
    /// Keys of the top level that the data cannot use: `aps` is Apple's, `push_id` the push's id.
    public static let reservedKeys: Set<String> = ["aps", "push_id"]

    /// Where the device's pushes go: `override` (a test's stand-in) or Apple's server for its environment
    /// (`sandbox` for a development build's token, else production).
    public static func baseURL(environment: String?, override: String?) -> String {
        if let override { return trimmingSlash(override) }
        return environment == "sandbox" ? sandboxURL : productionURL
    }

    /// The request: `POST {base}/3/device/{token}` with the provider token and the push's headers.
    public static func request(for message: PushMessage, baseURL: String, providerToken: String) -> HTTPRequest {
        HTTPRequest(url: baseURL + "/3/device/" + message.address.token,
                    headers: [HTTPHeader("authorization", "bearer " + providerToken)] + headers(for: message),
                    body: payload(for: message))
    }

    /// The headers but for `authorization`. A silent update is a `background` push, which Apple wants at
    /// priority 5.
    public static func headers(for message: PushMessage) -> [HTTPHeader] {
        let silent = message.alert == nil
        var headers = [
            HTTPHeader("apns-topic", message.address.topic ?? ""),
            HTTPHeader("apns-push-type", silent ? "background" : "alert"),
            HTTPHeader("apns-priority", message.urgent && !silent ? "10" : "5"),
            HTTPHeader("apns-expiration", String(max(0, message.expiresAt))),
            HTTPHeader("apns-id", apnsID(for: message.id)),
        ]
        if let collapse = message.collapseKey, !collapse.isEmpty {
            headers.append(HTTPHeader("apns-collapse-id", String(collapse.utf8.prefix(64)) ?? collapse))
        }
        headers.append(HTTPHeader("content-type", "application/json"))
        return headers
    }

    /// `{"aps":{…},"push_id":…,<data>…}`. An alert: title and body, badge, `sound` unless quiet, the
    /// interruption level (`passive` when quiet), the thread (the collapse key) and the category. A silent update:
    /// `content-available` and the badge only.
    public static func payload(for message: PushMessage) -> [UInt8] {
        var aps: [(String, JSONValue)] = []
        if let alert = message.alert {
            aps.append(("alert", .object([("title", .string(alert.title)), ("body", .string(alert.body))])))
            if let badge = message.badge { aps.append(("badge", .int(Int64(badge)))) }
            if !alert.quiet { aps.append(("sound", .string("default"))) }
            aps.append(("interruption-level", .string(alert.quiet ? "passive" : "active")))
            if let thread = message.collapseKey, !thread.isEmpty { aps.append(("thread-id", .string(thread))) }
            aps.append(("category", .string(message.category)))
        } else {
            aps.append(("content-available", .int(1)))
            if let badge = message.badge { aps.append(("badge", .int(Int64(badge)))) }
        }
        var top: [(String, JSONValue)] = [("aps", .object(aps)), ("push_id", .string(message.id))]
        for key in message.data.keys.sorted() where !reservedKeys.contains(key) {
            top.append((key, .string(message.data[key]!)))
        }
        return JSONValue.object(top).bytes
    }

    /// A UUID made from the SHA-256 of the push's id (its first 16 bytes, marked version 8, RFC 9562 variant), in
    /// Apple's upper-case 8-4-4-4-12 form: the same push gets the same `apns-id` on every retry.
    public static func apnsID(for id: String) -> String {
        var bytes = Array(Digest.sha256(Array(id.utf8)).prefix(16))
        bytes[6] = bytes[6] & 0x0F | 0x80
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { out.append(UInt8(ascii: "-")) }
            out += [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// What an answer means. `ExpiredProviderToken` is `.retry` here; the provider renews its token and tries once
    /// more first (`isExpiredProviderToken`).
    public static func outcome(of response: HTTPResponse) -> PushOutcome {
        let reason = ErrorBody.reason(response.body)
        switch response.status {
        case 200: return .delivered
        case 410: return .gone(reason: reason ?? "Unregistered")
        case 400 where reason == "BadDeviceToken" || reason == "DeviceTokenNotForTopic":
            return .gone(reason: reason!)
        case 403 where reason == "ExpiredProviderToken":
            return .retry(afterSeconds: nil, reason: "ExpiredProviderToken")
        case 429, 500, 503:
            return .retry(afterSeconds: response.retryAfterSeconds, reason: reason ?? "HTTP \(response.status)")
        case 400..<500: return .rejected(reason: reason ?? "HTTP \(response.status)")
        default: return .retry(afterSeconds: response.retryAfterSeconds, reason: reason ?? "HTTP \(response.status)")
        }
    }

    /// APNs refused the provider token for its age (403 `ExpiredProviderToken`): renew it and send again.
    public static func isExpiredProviderToken(_ response: HTTPResponse) -> Bool {
        response.status == 403 && ErrorBody.reason(response.body) == "ExpiredProviderToken"
    }

    static func trimmingSlash(_ url: String) -> String {
        var url = Substring(url)
        while url.hasSuffix("/") { url = url.dropLast() }
        return String(url)
    }
}

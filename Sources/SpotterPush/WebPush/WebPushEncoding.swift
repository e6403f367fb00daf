import SpotterCore
import SpotterPorts
import SpotterPushCrypto

/// A push as a Web Push service wants it (RFC 8030 headers, RFC 8291 body, RFC 8292 authorization), and its
/// answer as an outcome: pure but for the encryption's fresh key and salt.
public enum WebPushEncoding {
    /// The plaintext the service worker receives: `{"id","title","body","badge","category","data"}`; a silent
    /// update has no title or body.
    public static func payload(for message: PushMessage) -> [UInt8] {
        var fields: [(String, JSONValue)] = [("id", .string(message.id))]
        if let alert = message.alert {
            fields.append(("title", .string(alert.title)))
            fields.append(("body", .string(alert.body)))
            if alert.quiet { fields.append(("quiet", .bool(true))) }
        }
        if let badge = message.badge { fields.append(("badge", .int(Int64(badge)))) }
        fields.append(("category", .string(message.category)))
        fields.append(("data", .object(message.data.keys.sorted().map { ($0, .string(message.data[$0]!)) })))
        return JSONValue.object(fields).bytes
    }

    /// The headers but for `Authorization`: `TTL` (seconds left until `expiresAt`, at least 0), `Urgency`,
    /// `Topic` (the collapse key, when it is one: at most 32 characters of the base64url alphabet) and the coding.
    public static func headers(for message: PushMessage, now: Int64) -> [HTTPHeader] {
        var headers = [
            HTTPHeader("TTL", String(max(0, message.expiresAt - now))),
            HTTPHeader("Urgency", message.urgent && message.alert != nil ? "high" : "normal"),
        ]
        if let topic = message.collapseKey, isTopic(topic) { headers.append(HTTPHeader("Topic", topic)) }
        headers += [HTTPHeader("Content-Encoding", "aes128gcm"), HTTPHeader("Content-Type", "application/octet-stream")]
        return headers
    }

    /// RFC 8030 §5.4: a topic is at most 32 characters of the URL- and filename-safe base64 alphabet.
    public static func isTopic(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 32
            && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F }
    }

    /// The subscription's keys, or why the address cannot be pushed to.
    public static func keys(of address: PushAddress) -> Result<WebPushSubscriptionKeys, OutcomeError> {
        guard let p256dh = address.p256dh, let auth = address.auth else {
            return .failure(OutcomeError(.gone(reason: "a subscription without keys")))
        }
        do {
            return .success(try WebPushSubscriptionKeys(p256dh: p256dh, auth: auth))
        } catch {
            return .failure(OutcomeError(.gone(reason: "subscription keys: \(error)")))
        }
    }

    /// The request to the subscription's endpoint: the encrypted body and the VAPID `authorization`.
    public static func request(for message: PushMessage, encryptedBody: [UInt8], authorization: String, now: Int64) -> HTTPRequest {
        HTTPRequest(url: message.address.token,
                    headers: [HTTPHeader("Authorization", authorization)] + headers(for: message, now: now),
                    body: encryptedBody)
    }

    /// 201 (or any 2xx) delivered; 404 and 410 gone; 429 and 5xx later; the rest (400, 403, 413) refused.
    public static func outcome(of response: HTTPResponse) -> PushOutcome {
        let reason = ErrorBody.reason(response.body) ?? "HTTP \(response.status)"
        switch response.status {
        case 200..<300: return .delivered
        case 404, 410: return .gone(reason: reason)
        case 429, 500..<600: return .retry(afterSeconds: response.retryAfterSeconds, reason: reason)
        default: return .rejected(reason: reason)
        }
    }
}

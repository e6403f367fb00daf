import SpotterCore
import SpotterPorts

/// A push as FCM HTTP v1 wants it (`projects.messages.send`), and FCM's answer as an outcome: pure. Firebase's
/// "REST Resource: projects.messages" and "FCM error codes".
public enum FCMEncoding {
    public static let productionURL = "https://fcm.googleapis.com"

    /// `POST {base}/v1/projects/{project}/messages:send` with the access token.
    public static func request(for message: PushMessage, baseURL: String, projectID: String, accessToken: String,
                               now: Int64) -> HTTPRequest {
        HTTPRequest(url: APNsEncoding.trimmingSlash(baseURL) + "/v1/projects/" + projectID + "/messages:send",
                    headers: [HTTPHeader("authorization", "Bearer " + accessToken),
                              HTTPHeader("content-type", "application/json; charset=UTF-8")],
                    body: body(for: message, now: now))
    }

    /// `{"message":{…}}`: the token; `notification` (absent for a silent update); `data` (strings: the push's data
    /// with `push_id`, `category` and `badge`); and per platform the collapse key, priority and lifetime —
    /// `android` (`collapse_key`, `priority` HIGH/NORMAL, `ttl` "Ns"), `apns` (headers and `aps.badge`, and
    /// `content-available` when silent) and `webpush` (`Topic`, `Urgency`, `TTL`).
    public static func body(for message: PushMessage, now: Int64) -> [UInt8] {
        let ttl = max(0, message.expiresAt - now)
        let urgent = message.urgent && message.alert != nil
        var fields: [(String, JSONValue)] = [("token", .string(message.address.token))]
        if let alert = message.alert {
            fields.append(("notification", .object([("title", .string(alert.title)), ("body", .string(alert.body))])))
        }
        var data: [(String, JSONValue)] = message.data.keys.sorted()
            .filter { !["push_id", "badge", "category"].contains($0) }
            .map { ($0, .string(message.data[$0]!)) }
        data.append(("push_id", .string(message.id)))
        data.append(("category", .string(message.category)))
        if let badge = message.badge { data.append(("badge", .string(String(badge)))) }
        fields.append(("data", .object(data)))

        var android: [(String, JSONValue)] = []
        if let collapse = message.collapseKey, !collapse.isEmpty { android.append(("collapse_key", .string(collapse))) }
        android.append(("priority", .string(urgent ? "HIGH" : "NORMAL")))
        android.append(("ttl", .string("\(ttl)s")))
        if let alert = message.alert, alert.quiet {
            android.append(("notification", .object([("notification_priority", .string("PRIORITY_MIN")),
                                                     ("default_sound", .bool(false))])))
        }
        fields.append(("android", .object(android)))

        var apnsHeaders: [(String, JSONValue)] = []
        if let collapse = message.collapseKey, !collapse.isEmpty { apnsHeaders.append(("apns-collapse-id", .string(collapse))) }
        apnsHeaders.append(("apns-priority", .string(urgent ? "10" : "5")))
        apnsHeaders.append(("apns-expiration", .string(String(max(0, message.expiresAt)))))
        apnsHeaders.append(("apns-push-type", .string(message.alert == nil ? "background" : "alert")))
        var aps: [(String, JSONValue)] = []
        if let badge = message.badge { aps.append(("badge", .int(Int64(badge)))) }
        if message.alert == nil { aps.append(("content-available", .int(1))) }
        else if message.alert?.quiet == false { aps.append(("sound", .string("default"))) }
        fields.append(("apns", .object([("headers", .object(apnsHeaders)), ("payload", .object([("aps", .object(aps))]))])))

        var webHeaders: [(String, JSONValue)] = []
        if let collapse = message.collapseKey, !collapse.isEmpty { webHeaders.append(("Topic", .string(collapse))) }
        webHeaders.append(("Urgency", .string(urgent ? "high" : "normal")))
        webHeaders.append(("TTL", .string(String(ttl))))
        fields.append(("webpush", .object([("headers", .object(webHeaders))])))
        return JSONValue.object([("message", .object(fields))]).bytes
    }

    /// What an answer means. 401 is `.retry` here; the provider gets a new access token and tries once more first.
    public static func outcome(of response: HTTPResponse) -> PushOutcome {
        let error = ErrorBody.fcm(response.body)
        let reason = error.codes.first ?? error.status ?? "HTTP \(response.status)"
        if (200..<300).contains(response.status) { return .delivered }
        if response.status == 404 || error.codes.contains("UNREGISTERED") || error.status == "UNREGISTERED" {
            return .gone(reason: error.codes.contains("UNREGISTERED") ? "UNREGISTERED" : reason)
        }
        switch response.status {
        case 401: return .retry(afterSeconds: nil, reason: reason)
        case 429, 500..<600: return .retry(afterSeconds: response.retryAfterSeconds, reason: reason)
        default: return .rejected(reason: reason)
        }
    }
}

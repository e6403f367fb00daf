/// The `Spotter-Signature` header of a webhook delivery: `t=<unix seconds>,v1=<hex HMAC-SHA256>` where the MAC is
/// over the ASCII text `"<t>.<raw body>"` under the endpoint's secret (the secret's UTF-8 bytes, `whsec_…` as
/// shown). The receiver recomputes it over the body exactly as received, compares in constant time and refuses a
/// `t` more than `toleranceSeconds` from its own clock (a captured delivery replayed later). Protocol/README.md,
/// "Webhooks", shows the check in Python and JavaScript.
public enum WebhookSignature {
    public static let header = "Spotter-Signature"
    /// The window a receiver should accept: five minutes either side.
    public static let toleranceSeconds: Int64 = 300

    public static func mac(secret: String, timestamp: Int64, body: [UInt8]) -> String {
        Digest.hex(Digest.hmacSHA256(key: Array(secret.utf8), message: Array("\(timestamp).".utf8) + body))
    }

    public static func value(secret: String, timestamp: Int64, body: [UInt8]) -> String {
        "t=\(timestamp),v1=\(mac(secret: secret, timestamp: timestamp, body: body))"
    }

    /// Whether `header` signs `body` under `secret` within the tolerance of `now`: what a receiver does (the
    /// tests check the server's own deliveries with it, and independently in Python). Any `v1` in the header may
    /// match (a receiver may be sent more than one while a secret is rotated).
    public static func verify(header: String, secret: String, body: [UInt8], now: Int64,
                              toleranceSeconds: Int64 = toleranceSeconds) -> Bool {
        var timestamp: Int64?
        var macs: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            switch pair[0] {
            case "t": timestamp = Int64(pair[1])
            case "v1": macs.append(String(pair[1]))
            default: continue
            }
        }
        guard let timestamp, timestamp >= now - toleranceSeconds, timestamp <= now + toleranceSeconds else { return false }
        let expected = Array(mac(secret: secret, timestamp: timestamp, body: body).utf8)
        return macs.contains { Digest.constantTimeEquals(Array($0.utf8), expected) }
    }
}

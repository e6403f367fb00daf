/// A typed error for a WebSocket reply or an HTTP response.
///
/// Guarantees: value semantics, `Equatable` on all three fields; `jsonBody` is deterministic (same error,
/// same language → same bytes) and always valid UTF-8 JSON.
public struct APIError: Error, Sendable, Equatable {
    /// What went wrong, as a stable code.
    public var code: ErrorCode
    /// The request field at fault (snake_case, as on the wire), if one is.
    public var field: String?
    /// Seconds until a retry can succeed (for 429s).
    public var retryAfterSeconds: Int?

    public init(_ code: ErrorCode, field: String? = nil, retryAfterSeconds: Int? = nil) {
        self.code = code
        self.field = field
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// `{"error":{"code":"invalid_email","message":"…","field":"email","retry_after":42}}`.
    ///
    /// Guarantees: keys in exactly this order; `field` and `retry_after` only when set; the message is
    /// `code.message(language)`; strings escaped per RFC 8259 as `JSONEncoder` does (`\"`, `\\`, `\n` and the
    /// other short escapes, other control characters as `\u00XX`), other characters (Arabic included) as UTF-8.
    public func jsonBody(_ language: Language) -> [UInt8] {
        Array(#"{"error":"#.utf8) + jsonObject(language) + [UInt8(ascii: "}")]
    }

    /// The inner object alone, `{"code":…,"message":…}`: what a WebSocket
    /// error reply carries under `error`.
    public func jsonObject(_ language: Language) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160)
        Self.append(#"{"code":"#, to: &out)
        JSONText.appendString(code.rawValue, to: &out)
        Self.append(#","message":"#, to: &out)
        JSONText.appendString(code.message(language), to: &out)
        if let field {
            Self.append(#","field":"#, to: &out)
            JSONText.appendString(field, to: &out)
        }
        if let retryAfterSeconds {
            Self.append(#","retry_after":"#, to: &out)
            Self.append(String(retryAfterSeconds), to: &out)
        }
        Self.append("}", to: &out)
        return out
    }

    /// Appends the raw UTF-8 bytes of `text`.
    private static func append(_ text: String, to out: inout [UInt8]) {
        out.append(contentsOf: text.utf8)
    }
}

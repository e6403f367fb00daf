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
    /// What makes this instance's message more precise than its code's (a used-up quota names the tier).
    public var detail: ErrorDetail?

    public init(_ code: ErrorCode, field: String? = nil, retryAfterSeconds: Int? = nil, detail: ErrorDetail? = nil) {
        self.code = code
        self.field = field
        self.retryAfterSeconds = retryAfterSeconds
        self.detail = detail
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
        JSONText.appendString(detail?.message(language) ?? code.message(language), to: &out)
        if let field {
            Self.append(#","field":"#, to: &out)
            JSONText.appendString(field, to: &out)
        }
        if let retryAfterSeconds {
            Self.append(#","retry_after":"#, to: &out)
            Self.append(String(retryAfterSeconds), to: &out)
        }
        if let upgrade = detail?.upgradeTo {
            Self.append(#","upgrade_to":"#, to: &out)
            JSONText.appendString(upgrade, to: &out)
        }
        if case .aiGenerationQuota(_, let resetsAt) = detail {
            Self.append(#","resets_at":"#, to: &out)
            Self.append(String(resetsAt), to: &out)
        }
        if case .linkedClients(let count) = detail {
            Self.append(#","linked_clients":"#, to: &out)
            Self.append(String(count), to: &out)
        }
        Self.append("}", to: &out)
        return out
    }

    /// Appends the raw UTF-8 bytes of `text`.
    private static func append(_ text: String, to out: inout [UInt8]) {
        out.append(contentsOf: text.utf8)
    }
}

/// An error's particulars, where the code alone would say less than the person needs.
public enum ErrorDetail: Sendable, Equatable {
    /// The monthly messages of `tier` (a tier's wire name) are used up.
    case messageQuota(tier: String)
    /// The monthly video calls of `tier` are used up.
    case callQuota(tier: String)
    /// A video call longer than `tier` allows.
    case callLength(tier: String)
    /// Attachments are Smart Premium's.
    case attachments
    /// Freemium keeps `limit` progress photos; Premium and up, any number.
    case progressPhotos(limit: Int)
    /// The AI generations of `tier`'s window are used up; the window starts again at `resetsAt` (Unix seconds).
    case aiGenerationQuota(tier: String, resetsAt: Int64)
    /// InBody scans are Premium's and up (seed 000 FR-PROGRESS-03).
    case inbody
    /// A coach's erasure refused: `count` clients are linked to them (`coach_has_clients`).
    case linkedClients(count: Int)

    /// The tier a refusal offers (nil at the top tier).
    public var upgradeTo: String? {
        switch self {
        case .linkedClients:
            return nil
        case .callLength(let tier):
            return tier == "freemium" ? "premium" : nil  // Premium and Smart Premium calls are as long
        case .attachments:
            return "smart_premium"
        case .progressPhotos, .inbody:
            return "premium"
        case .messageQuota(let tier), .callQuota(let tier), .aiGenerationQuota(let tier, _):
            switch tier {
            case "freemium": return "premium"
            case "premium": return "smart_premium"
            default: return nil
            }
        }
    }

    /// The seed's offer, worded for the tier (seed 000 §4: Freemium 20 messages and 1 call of 15 minutes,
    /// Premium 200 and 2 of 25, Smart Premium unlimited and 4 of 25).
    public func message(_ language: Language) -> String {
        let ar = language == .arabic
        switch self {
        case .attachments:
            return ErrorCode.planUpgradeRequired.message(language)
        case .progressPhotos(let limit):
            return ar ? "تحتفظ الباقة المجانية بـ \(limit) صور تقدّم فقط. رقِّ اشتراكك إلى Premium لصور غير محدودة."
                : "Freemium keeps up to \(limit) progress photos. Upgrade to Premium for unlimited progress photos."
        case .linkedClients(let count):
            return ErrorDetail.linkedClientsMessage(count, ar)
        case .inbody:
            return ar ? "تتبّع فحوصات InBody متاح في باقتي Premium و Smart Premium. رقِّ اشتراكك إلى Premium لتسجيل فحوصاتك."
                : "InBody tracking is for Premium and Smart Premium. Upgrade to Premium to record your InBody scans."
        case .aiGenerationQuota(let tier, _):
            return ErrorDetail.aiGenerationMessage(tier, ar)
        case .messageQuota(let tier):
            switch tier {
            case "freemium":
                return ar ? "استخدمت رسائلك العشرين لهذا الشهر. رقِّ إلى Premium لتحصل على 200 رسالة شهريًا، أو إلى Smart Premium لرسائل غير محدودة."
                    : "You have used your 20 messages for this month. Upgrade to Premium for 200 messages a month, or to Smart Premium for unlimited messages."
            default:
                return ar ? "استخدمت رسائلك المئتين لهذا الشهر. رقِّ إلى Smart Premium لرسائل غير محدودة."
                    : "You have used your 200 messages for this month. Upgrade to Smart Premium for unlimited messages."
            }
        case .callLength(let tier):
            return tier == "freemium"
                ? (ar ? "مكالمات الفيديو في باقتك مدتها 15 دقيقة كحد أقصى. رقِّ إلى Premium لمكالمات مدتها 25 دقيقة."
                      : "Video calls on your plan last at most 15 minutes. Upgrade to Premium for 25-minute calls.")
                : (ar ? "مكالمات الفيديو في باقتك مدتها 25 دقيقة كحد أقصى."
                      : "Video calls on your plan last at most 25 minutes.")
        case .callQuota(let tier):
            switch tier {
            case "freemium":
                return ar ? "استخدمت مكالمة الفيديو المتاحة لك هذا الشهر. رقِّ إلى Premium لمكالمتين شهريًا مدة كل منهما 25 دقيقة، أو إلى Smart Premium لأربع مكالمات."
                    : "You have used your video call for this month. Upgrade to Premium for 2 calls a month of 25 minutes, or to Smart Premium for 4."
            case "premium":
                return ar ? "استخدمت مكالمتي الفيديو المتاحتين لك هذا الشهر. رقِّ إلى Smart Premium لأربع مكالمات شهريًا."
                    : "You have used your 2 video calls for this month. Upgrade to Smart Premium for 4 calls a month."
            default:
                return ar ? "استخدمت مكالمات الفيديو الأربع المتاحة لك هذا الشهر. يتجدد رصيدك في أول الشهر القادم."
                    : "You have used your 4 video calls for this month. They renew on the first day of next month."
            }
        }
    }
}

extension ErrorDetail {
    /// Seed 001: Free 1 a week, Basic 3 a week, Premium 3 a day (Spotter's Freemium, Premium, Smart Premium).
    static func aiGenerationMessage(_ tier: String, _ arabic: Bool) -> String {
        switch tier {
        case "freemium":
            return arabic ? "استخدمت توليد الذكاء الاصطناعي المتاح لك هذا الأسبوع. رقِّ إلى Premium لثلاثة في الأسبوع، أو إلى Smart Premium لثلاثة في اليوم."
                : "You have used your AI generation for this week. Upgrade to Premium for 3 a week, or to Smart Premium for 3 a day."
        case "premium":
            return arabic ? "استخدمت توليدات الذكاء الاصطناعي الثلاثة المتاحة لك هذا الأسبوع. رقِّ إلى Smart Premium لثلاثة في اليوم."
                : "You have used your 3 AI generations for this week. Upgrade to Smart Premium for 3 a day."
        default:
            return arabic ? "استخدمت توليدات الذكاء الاصطناعي الثلاثة المتاحة لك اليوم. يتجدد رصيدك عند منتصف الليل."
                : "You have used your 3 AI generations for today. They renew at midnight."
        }
    }

    /// "Hand your N clients to another coach or end the links first" (Arabic has its own words for one and two).
    static func linkedClientsMessage(_ count: Int, _ arabic: Bool) -> String {
        guard arabic else {
            let clients = count == 1 ? "your client" : "your \(count) clients"
            return "Hand \(clients) to another coach or end the links first, then delete the account."
        }
        let clients: String
        switch count {
        case 1: clients = "عميلك"
        case 2: clients = "عميليك الاثنين"
        default: clients = "عملاءك الـ\(count)"
        }
        return "انقل \(clients) إلى مدرب آخر أو أنهِ الارتباط أولًا، ثم احذف الحساب."
    }
}

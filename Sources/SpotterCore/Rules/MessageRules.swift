import SpotterProtocol

/// What a chat message may contain (seed 000 §3.4, seed 002 "Messaging
/// system"). Pure: the server calls these before anything is written.
public enum MessageRules {
    /// Text messages: 1…1,000 user-perceived characters (grapheme clusters,
    /// so an Arabic letter with its diacritics or an emoji counts once).
    public static let maxTextCharacters = 1000
    /// And at most 8 KiB of UTF-8: a character may carry any number of combining marks.
    public static let maxTextBytes = 8192
    /// The conversation list's preview: 100 characters, 400 bytes.
    public static let maxPreviewCharacters = 100
    public static let maxPreviewBytes = 400
    public static let maxClientMessageIDLength = 64
    public static let mealTypes: Set<String> = ["breakfast", "lunch", "dinner", "snack"]

    /// The idempotency key: 1…64 printable ASCII characters.
    public static func clientMessageID(_ raw: String?) throws(APIError) -> String {
        guard let raw, !raw.isEmpty else { throw APIError(.missingField, field: "client_message_id") }
        guard raw.utf8.count <= maxClientMessageIDLength, raw.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else {
            throw APIError(.badRequest, field: "client_message_id")
        }
        return raw
    }

    /// A text body: not blank, at most 1,000 characters, no NUL (SQLite's text readers stop at one, so it could
    /// not come back as sent). Kept exactly as sent.
    public static func text(_ raw: String?) throws(APIError) -> String {
        guard let raw, TextScan.hasNonWhitespace(raw), !raw.utf8.contains(0) else {
            throw APIError(.invalidMessage, field: "text")
        }
        guard TextBounds.fits(raw, maxCharacters: maxTextCharacters, maxBytes: maxTextBytes) else {
            throw APIError(.messageTooLong, field: "text")
        }
        return raw
    }

    /// A meal card: a name (1…100), up to 50 ingredients (1…100 each),
    /// calories 0…10,000, each macro 0…1,000 g, a known meal type, and an
    /// optional photo reference of up to 200 characters.
    public static func meal(_ raw: MealLog?) throws(APIError) -> MealLog {
        guard var meal = raw else { throw APIError(.missingField, field: "meal") }
        meal.name = meal.name.trimmedForMessage()
        guard !meal.name.isEmpty, TextBounds.fits(meal.name, maxCharacters: 100) else { throw APIError(.invalidMessage, field: "meal.name") }
        meal.ingredients = meal.ingredients.map { $0.trimmedForMessage() }.filter { !$0.isEmpty }
        guard meal.ingredients.count <= 50, meal.ingredients.allSatisfy({ TextBounds.fits($0, maxCharacters: 100) }) else {
            throw APIError(.invalidMessage, field: "meal.ingredients")
        }
        guard (0...10_000).contains(meal.calories), meal.calories.isFinite else { throw APIError(.outOfRange, field: "meal.calories") }
        for (value, field) in [(meal.proteinG, "meal.protein_g"), (meal.carbsG, "meal.carbs_g"), (meal.fatsG, "meal.fats_g")] {
            guard value.isFinite, (0...1000).contains(value) else { throw APIError(.outOfRange, field: field) }
        }
        guard mealTypes.contains(meal.mealType) else { throw APIError(.invalidMessage, field: "meal.meal_type") }
        if let photo = meal.photoRef, photo.isEmpty || !TextBounds.fits(photo, maxCharacters: 200) { throw APIError(.invalidMessage, field: "meal.photo_ref") }
        return meal
    }

    /// What the conversation list shows: the start of a text (newlines as
    /// spaces), or the meal's name; at most 100 characters and 400 bytes.
    public static func preview(text: String?, meal: MealLog?) -> String {
        if meal == nil, let text, let preview = TextScan.asciiPreview(text) { return preview }
        let full = meal.map { "🍽 " + $0.name } ?? String((text ?? "").map { $0.isNewline ? " " : $0 })
        return TextBounds.prefix(full, maxCharacters: maxPreviewCharacters, maxBytes: maxPreviewBytes)
    }
}

/// A token bucket: `capacity` commands at once, refilled at `perSecond`.
/// Pure; the caller passes the time in seconds.
public struct TokenBucket: Sendable, Equatable {
    public let capacity: Double
    public let perSecond: Double
    private var tokens: Double
    private var updatedAt: Double?

    public init(capacity: Double, perSecond: Double) {
        self.capacity = capacity
        self.perSecond = perSecond
        tokens = capacity
    }

    /// Takes one token if there is one.
    public mutating func take(now: Double) -> Bool {
        if let updatedAt, now > updatedAt { tokens = min(capacity, tokens + (now - updatedAt) * perSecond) }
        updatedAt = max(updatedAt ?? now, now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}

extension String {
    func trimmedForMessage() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}

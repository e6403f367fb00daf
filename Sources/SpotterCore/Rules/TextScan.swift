/// Fast paths for what every send asks of a text, in one pass over its UTF-8 instead of a walk over its
/// characters (grapheme clusters, which cost tens of instructions each): whether it has a visible character,
/// and the conversation list's preview of an ASCII text. Each gives exactly what the character walk gives
/// (a test compares the two over random texts: control characters, CR LF, combining marks, emoji, Arabic);
/// where it cannot tell, it says so and the caller walks the characters.
enum TextScan {
    /// Whether some character of `text` is not whitespace (`Character.isWhitespace`, which is its first
    /// scalar's Unicode White_Space property).
    ///
    /// An ASCII byte other than the six whitespace ones (tab, LF, VT, FF, CR, space) is the first scalar of a
    /// character that is not whitespace, or joins one whose first scalar is a prepended mark (not whitespace
    /// either): no rule of UAX #29 joins an ASCII letter, digit or sign to a preceding space or control
    /// (GB4, GB999), and only LF joins a CR (GB3). So finding one answers yes; only texts without one (blank
    /// ASCII, or non-ASCII only) need the characters.
    static func hasNonWhitespace(_ text: String) -> Bool {
        if text.utf8.contains(where: { $0 < 0x80 && $0 != 0x20 && !(0x09...0x0D).contains($0) }) { return true }
        return text.contains { !$0.isWhitespace }
    }

    /// The list's preview (`MessageRules.preview(text:meal:)`) of an all-ASCII text; nil for any other text.
    ///
    /// In ASCII every byte is one character but CR LF, which is one newline. Newlines (LF, VT, FF, CR and
    /// CR LF) become one space each; then the text whole if it has at most `maxPreviewCharacters` characters
    /// (ASCII: its bytes are within `maxPreviewBytes` too), else its first `maxPreviewCharacters - 1` and "…".
    static func asciiPreview(_ text: String) -> String? {
        let limit = MessageRules.maxPreviewCharacters
        guard MessageRules.maxPreviewBytes >= limit + 2 else { return nil }  // "…" is 3 bytes: the byte budget never binds in ASCII
        var text = text
        return text.withUTF8 { utf8 -> String? in
            guard !utf8.contains(where: { $0 >= 0x80 }) else { return nil }
            var kept: [UInt8] = []
            kept.reserveCapacity(min(utf8.count, limit) + 3)
            var characters = 0
            var afterCR = false
            for byte in utf8 {
                if byte == 0x0A, afterCR {  // the LF of a CR LF: the same character as the CR
                    afterCR = false
                    continue
                }
                afterCR = byte == 0x0D
                characters += 1
                if characters > limit { break }
                kept.append((0x0A...0x0D).contains(byte) ? 0x20 : byte)
            }
            guard characters > limit else { return String(decoding: kept, as: UTF8.self) }
            kept.removeLast()
            kept.append(contentsOf: [0xE2, 0x80, 0xA6])  // "…"
            return String(decoding: kept, as: UTF8.self)
        }
    }
}

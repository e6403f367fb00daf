/// Character limits count grapheme clusters, so an Arabic letter with its
/// marks or an emoji counts once; but one cluster may hold any number of
/// combining marks ("a" and 20,000 of them is one character). Every limit
/// in characters therefore comes with a limit in bytes, checked first: it
/// is cheap, and it bounds what is stored and sent whatever the text is.
public enum TextBounds {
    /// UTF-8 bytes allowed per character of a limit: room for a letter with
    /// several marks, or a family emoji, without allowing unbounded clusters.
    public static let bytesPerCharacter = 8

    /// True when `text` has at most `maxCharacters` characters and at most
    /// `maxBytes` (by default `bytesPerCharacter` × `maxCharacters`) bytes of UTF-8.
    public static func fits(_ text: some StringProtocol, maxCharacters: Int, maxBytes: Int? = nil) -> Bool {
        // A character is one byte at least: within `maxCharacters` bytes, no need to count the characters (the
        // count walks grapheme boundaries, many times the cost of the byte count).
        let bytes = text.utf8.count
        return bytes <= (maxBytes ?? maxCharacters * bytesPerCharacter) && (bytes <= maxCharacters || text.count <= maxCharacters)
    }

    /// The longest prefix of `text` within both limits, ending in "…" when
    /// something was cut. Characters are kept whole, but for a first character
    /// larger than the whole byte budget, which is cut between its scalars, so
    /// the result never passes `maxBytes`.
    public static func prefix(_ text: String, maxCharacters: Int, maxBytes: Int) -> String {
        if fits(text, maxCharacters: maxCharacters, maxBytes: maxBytes) { return text }
        let ellipsis = "…"
        let byteBudget = maxBytes - ellipsis.utf8.count
        var result = ""
        var bytes = 0
        var characters = 0
        for character in text {
            guard characters < maxCharacters - 1 else { break }
            let size = character.utf8.count
            if bytes + size > byteBudget {
                // A character that does not fit ends the prefix whole (never half a flag or a family emoji); only
                // a first character too large for the budget on its own (a huge cluster) is cut between scalars.
                guard characters == 0 else { break }
                for scalar in character.unicodeScalars {
                    let scalarSize = String(scalar).utf8.count
                    guard bytes + scalarSize <= byteBudget else { break }
                    result.unicodeScalars.append(scalar)
                    bytes += scalarSize
                }
                break
            }
            result.append(character)
            bytes += size
            characters += 1
        }
        return result + ellipsis
    }
}

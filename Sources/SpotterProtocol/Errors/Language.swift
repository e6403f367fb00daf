/// The languages the server speaks. Every person-facing message exists in both.
public enum Language: String, Sendable, Codable, CaseIterable {
    case english = "en"
    case arabic = "ar"

    /// Picks a language from an HTTP `Accept-Language` header (RFC 9110 §12.5.4).
    ///
    /// Guarantees:
    /// - The supported entry (`ar`, `ar-*`, `en`, `en-*`, case-insensitive) with the highest q-value wins;
    ///   on equal q-values the one listed first wins.
    /// - Entries with `q=0` (or a q-value that is not a number in 0…1) are never chosen.
    /// - Unsupported tags (`fr`, `*`, …) are skipped; `nil`, an empty header, garbage, or no supported
    ///   entry gives `.english`.
    public init(acceptLanguage: String?) {
        guard let header = acceptLanguage else {
            self = .english
            return
        }
        var best: (language: Language, q: Double)?
        for entry in header.split(separator: ",", omittingEmptySubsequences: true) {
            let parts = entry.split(separator: ";", omittingEmptySubsequences: false)
            guard let first = parts.first else { continue }
            let tag = Language.trimmedASCIIWhitespace(first).lowercased()
            guard let language = Language.supported(tag: tag) else { continue }
            var q = 1.0
            for parameter in parts.dropFirst() {
                let pieces = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard pieces.count == 2,
                      Language.trimmedASCIIWhitespace(pieces[0]).lowercased() == "q" else { continue }
                let value = Language.trimmedASCIIWhitespace(pieces[1])
                if let parsed = Double(value), parsed >= 0, parsed <= 1 {
                    q = parsed
                } else {
                    q = 0   // a malformed weight must not promote an entry
                }
            }
            guard q > 0 else { continue }
            if best == nil || q > best!.q {
                best = (language, q)
            }
        }
        self = best?.language ?? .english
    }

    /// The language for a lower-cased language tag, if it is one we support.
    private static func supported(tag: String) -> Language? {
        for language in Language.allCases {
            let code = language.rawValue
            if tag == code || tag.hasPrefix(code + "-") {
                return language
            }
        }
        return nil
    }

    /// Trims spaces and horizontal tabs (the only whitespace HTTP allows around list items).
    private static func trimmedASCIIWhitespace(_ text: Substring) -> String {
        var slice = text[...]
        while let c = slice.first, c == " " || c == "\t" { slice = slice.dropFirst() }
        while let c = slice.last, c == " " || c == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}

import SpotterProtocol

/// Validation and normalisation of what people type when they create an account or sign in.
///
/// Guarantees: pure (no clock, no I/O); every failure is an `APIError` carrying the snake_case wire field.
public enum AccountRules {
    /// Maximum password length in user-perceived characters (bounds hashing work).
    public static let maxPasswordCharacters = 128
    /// Minimum password length in user-perceived characters.
    public static let minPasswordCharacters = 6
    /// Maximum full-name length in user-perceived characters.
    public static let maxNameCharacters = 100

    /// Trims whitespace, lower-cases, and checks a practical format: exactly one "@"; a local part of
    /// 1…64 bytes of ASCII letters, digits and ``!#$%&'*+/=?^_`{|}~-`` with single, inner dots; a domain of
    /// two or more dot-separated labels, each 1…63 ASCII letters/digits/hyphens not starting or ending
    /// with a hyphen; at most 254 bytes in all.
    /// Throws `.invalidEmail` (field "email").
    public static func normalizeEmail(_ raw: String) throws(APIError) -> String {
        let email = raw.spotterTrimmed().lowercased()
        let failure = APIError(.invalidEmail, field: "email")
        let bytes = Array(email.utf8)
        guard !bytes.isEmpty, bytes.count <= 254 else { throw failure }
        let parts = bytes.split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw failure }
        let local = parts[0], domain = parts[1]
        guard (1...64).contains(local.count),
              local.first != UInt8(ascii: "."), local.last != UInt8(ascii: "."),
              !containsDoubleDot(local),
              local.allSatisfy({ isLocalPartByte($0) }) else { throw failure }
        let labels = domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.count >= 2 else { throw failure }
        for label in labels {
            guard (1...63).contains(label.count),
                  label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-"),
                  label.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") }) else { throw failure }
        }
        return email
    }

    /// Checks a new password: 6…128 user-perceived characters (an emoji counts as one), then that the
    /// confirmation is identical. Throws `.passwordTooShort` (field "password"), `.outOfRange`
    /// (field "password", longer than 128) or `.passwordMismatch` (field "password_confirmation").
    /// The password is used as typed: never trimmed.
    public static func checkPassword(_ password: String, confirmation: String) throws(APIError) {
        let count = password.count
        guard count >= minPasswordCharacters else { throw APIError(.passwordTooShort, field: "password") }
        guard count <= maxPasswordCharacters else { throw APIError(.outOfRange, field: "password") }
        // Compare scalars exactly: String == would treat canonically-equivalent spellings as equal,
        // while the hash is over the UTF-8 bytes.
        guard password.utf8.elementsEqual(confirmation.utf8) else {
            throw APIError(.passwordMismatch, field: "password_confirmation")
        }
    }

    /// Trims whitespace; the result must be 1…100 user-perceived characters with no control characters
    /// (tabs, newlines, …). Throws `.invalidName` (field "full_name").
    public static func normalizeName(_ raw: String) throws(APIError) -> String {
        let name = raw.spotterTrimmed()
        guard !name.isEmpty, TextBounds.fits(name, maxCharacters: maxNameCharacters),
              !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw APIError(.invalidName, field: "full_name")
        }
        return name
    }

    /// Accepts "+966 5X XXX XXXX", "+9665XXXXXXXX", "009665XXXXXXXX", "9665XXXXXXXX", "05XXXXXXXX" and
    /// "5XXXXXXXX", with spaces, dashes or parentheses anywhere and Arabic-Indic (٠-٩) or Eastern
    /// Arabic-Indic (۰-۹) digits; returns E.164 "+9665XXXXXXXX" (ASCII). A "+" is allowed only first.
    /// Anything else (landlines, other countries, wrong length, letters) throws `.invalidPhone` (field "phone").
    public static func normalizeSaudiMobile(_ raw: String) throws(APIError) -> String {
        let failure = APIError(.invalidPhone, field: "phone")
        var digits: [UInt8] = []
        var sawPlus = false
        for scalar in raw.unicodeScalars {
            let v = scalar.value
            switch v {
            case 0x30...0x39: digits.append(UInt8(v - 0x30))
            case 0x660...0x669: digits.append(UInt8(v - 0x660))
            case 0x6F0...0x6F9: digits.append(UInt8(v - 0x6F0))
            case 0x2B: // "+"
                guard !sawPlus, digits.isEmpty else { throw failure }
                sawPlus = true
            case 0x2D, 0x2010...0x2015, 0x28, 0x29: continue   // dashes and parentheses
            default:
                if scalar.properties.isWhitespace { continue }
                throw failure
            }
        }
        let national: ArraySlice<UInt8>
        if sawPlus {
            guard digits.starts(with: [9, 6, 6]) else { throw failure }
            national = digits.dropFirst(3)
        } else if digits.starts(with: [0, 0, 9, 6, 6]) {
            national = digits.dropFirst(5)
        } else if digits.starts(with: [9, 6, 6]) {
            national = digits.dropFirst(3)
        } else if digits.starts(with: [0]) {
            national = digits.dropFirst(1)
        } else {
            national = digits[...]
        }
        guard national.count == 9, national.first == 5 else { throw failure }
        return "+966" + national.map { String($0) }.joined()
    }

    private static func containsDoubleDot(_ bytes: ArraySlice<UInt8>) -> Bool {
        var previousDot = false
        for byte in bytes {
            let dot = byte == UInt8(ascii: ".")
            if dot && previousDot { return true }
            previousDot = dot
        }
        return false
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte)
    }

    private static func isLocalPartByte(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || Array("!#$%&'*+/=?^_`{|}~-.".utf8).contains(byte)
    }
}

extension String {
    /// The string without leading and trailing whitespace or newlines (Unicode `White_Space`).
    func spotterTrimmed() -> String {
        var slice = self[...]
        while let c = slice.first, c.isWhitespace { slice = slice.dropFirst() }
        while let c = slice.last, c.isWhitespace { slice = slice.dropLast() }
        return String(slice)
    }
}

import Testing
import SpotterProtocol
@testable import SpotterCore

/// Runs `body` and returns the APIError it threw, or nil if it returned.
func thrownAPIError<T>(_ body: () throws(APIError) -> T) -> APIError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

@Suite("AccountRules: email, password, name")
struct RulesAccountTests {
    @Test("valid emails are trimmed and lower-cased", arguments: [
        ("user@example.com", "user@example.com"),
        ("  User@Example.COM \n", "user@example.com"),
        ("\tfirst.last+tag@mail.example.co.uk", "first.last+tag@mail.example.co.uk"),
        ("a@b.co", "a@b.co"),
        ("o'brien@x-y.sa", "o'brien@x-y.sa"),
        ("USER_1@SUB.DOMAIN.ORG", "user_1@sub.domain.org"),
        ("\u{00A0}me@example.com\u{3000}", "me@example.com"),
    ])
    func validEmails(_ raw: String, _ expected: String) throws {
        #expect(try AccountRules.normalizeEmail(raw) == expected)
    }

    @Test("invalid emails throw invalid_email on field email", arguments: [
        "", "   ", "plainaddress", "@example.com", "user@", "user@example", "user@@example.com",
        "a@b@example.com", "user@.example.com", "user@example..com", "user@example.com.", "user@-example.com",
        "user@example-.com", ".user@example.com", "user.@example.com", "us..er@example.com",
        "us er@example.com", "user@exa mple.com", "user@exam_ple.com", "üser@example.com", "user@exämple.com",
        "\"quoted\"@example.com", "user@example.c\u{301}om",
        String(repeating: "a", count: 65) + "@example.com",
        "a@" + String(repeating: "b", count: 64) + ".com",
        "a@" + Array(repeating: String(repeating: "b", count: 60), count: 5).joined(separator: ".") + ".com",
    ])
    func invalidEmails(_ raw: String) {
        #expect(thrownAPIError { () throws(APIError) in try AccountRules.normalizeEmail(raw) }
                == APIError(.invalidEmail, field: "email"), "\(raw)")
    }

    @Test("length bounds: local part 64 bytes ok, total 254 ok")
    func emailLengthBounds() throws {
        let local64 = String(repeating: "a", count: 64) + "@example.com"
        #expect(try AccountRules.normalizeEmail(local64) == local64)
        // 64 + 1 + 189 = 254 bytes total.
        let domain = [String(repeating: "b", count: 63), String(repeating: "c", count: 63),
                      String(repeating: "d", count: 57), "com"].joined(separator: ".")
        let email254 = String(repeating: "a", count: 64) + "@" + domain
        #expect(email254.utf8.count == 254)
        #expect(try AccountRules.normalizeEmail(email254) == email254)
        let email255 = String(repeating: "a", count: 64) + "@" + [String(repeating: "b", count: 63),
            String(repeating: "c", count: 63), String(repeating: "d", count: 58), "com"].joined(separator: ".")
        #expect(email255.utf8.count == 255)
        #expect(thrownAPIError { () throws(APIError) in try AccountRules.normalizeEmail(email255) } != nil)
    }

    @Test("passwords of 6 characters pass, 5 fail")
    func passwordLength() throws {
        try AccountRules.checkPassword("abcdef", confirmation: "abcdef")
        #expect(thrownAPIError { () throws(APIError) in try AccountRules.checkPassword("abcde", confirmation: "abcde") }
                == APIError(.passwordTooShort, field: "password"))
        #expect(thrownAPIError { () throws(APIError) in try AccountRules.checkPassword("", confirmation: "") }
                == APIError(.passwordTooShort, field: "password"))
    }

    @Test("an emoji or combined character counts as one character")
    func passwordGraphemes() throws {
        // Five family emoji: many bytes and scalars, but five characters.
        let five = String(repeating: "👨‍👩‍👧", count: 5)
        #expect(five.utf8.count > 6)
        #expect(thrownAPIError { () throws(APIError) in try AccountRules.checkPassword(five, confirmation: five) }
                == APIError(.passwordTooShort, field: "password"))
        let six = five + "🇸🇦"
        try AccountRules.checkPassword(six, confirmation: six)
        let accented = "e\u{301}e\u{301}e\u{301}ab"   // five characters, eight scalars
        #expect(thrownAPIError { () throws(APIError) in try AccountRules.checkPassword(accented, confirmation: accented) }
                == APIError(.passwordTooShort, field: "password"))
    }

    @Test("mismatch is reported on password_confirmation")
    func passwordMismatch() {
        #expect(thrownAPIError { () throws(APIError) in try AccountRules.checkPassword("secret1", confirmation: "secret2") }
                == APIError(.passwordMismatch, field: "password_confirmation"))
        #expect(thrownAPIError { () throws(APIError) in try AccountRules.checkPassword("secret1", confirmation: "secret1 ") }
                == APIError(.passwordMismatch, field: "password_confirmation"))
        // Canonically equivalent but different bytes: the hash would differ, so they must not match.
        #expect(thrownAPIError { () throws(APIError) in
            try AccountRules.checkPassword("caf\u{E9}12", confirmation: "cafe\u{301}12") }
                == APIError(.passwordMismatch, field: "password_confirmation"))
    }

    @Test("length is checked before the confirmation")
    func passwordOrder() {
        #expect(thrownAPIError { () throws(APIError) in try AccountRules.checkPassword("abc", confirmation: "xyz") }
                == APIError(.passwordTooShort, field: "password"))
    }

    @Test("passwords over 128 characters are refused, 128 accepted")
    func passwordMaximum() throws {
        let max = String(repeating: "x", count: 128)
        try AccountRules.checkPassword(max, confirmation: max)
        let over = max + "x"
        #expect(thrownAPIError { () throws(APIError) in try AccountRules.checkPassword(over, confirmation: over) }
                == APIError(.outOfRange, field: "password"))
    }

    @Test("passwords are not trimmed")
    func passwordNotTrimmed() throws {
        try AccountRules.checkPassword("  ab  ", confirmation: "  ab  ")
    }

    @Test("names are trimmed and kept as typed", arguments: [
        ("Sara Ahmed", "Sara Ahmed"), ("  محمد العتيبي \n", "محمد العتيبي"), ("X", "X"), ("\tO'Neil-Smith ", "O'Neil-Smith"),
    ])
    func validNames(_ raw: String, _ expected: String) throws {
        #expect(try AccountRules.normalizeName(raw) == expected)
    }

    @Test("name length bounds: 100 characters ok, 101 refused")
    func nameLength() throws {
        let hundred = String(repeating: "ن", count: 100)
        #expect(try AccountRules.normalizeName(" " + hundred + " ") == hundred)
        #expect(thrownAPIError { () throws(APIError) in try AccountRules.normalizeName(hundred + "ن") }
                == APIError(.invalidName, field: "full_name"))
    }

    @Test("empty, blank or control-character names are refused", arguments: ["", "   ", "\n\t", "Sara\nAhmed", "A\u{0}B"])
    func invalidNames(_ raw: String) {
        #expect(thrownAPIError { () throws(APIError) in try AccountRules.normalizeName(raw) }
                == APIError(.invalidName, field: "full_name"))
    }
}

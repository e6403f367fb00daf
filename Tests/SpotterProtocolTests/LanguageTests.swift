import Testing
@testable import SpotterProtocol

@Suite("Language from Accept-Language")
struct LanguageTests {
    @Test("picks the highest-q supported language", arguments: [
        ("ar-SA,en;q=0.8", Language.arabic),
        ("en-US,ar;q=0.9", .english),
        ("fr, ar;q=0.5", .arabic),
        ("ar;q=0", .english),
        ("ar", .arabic),
        ("AR-sa", .arabic),
        ("en", .english),
        ("en-GB", .english),
        ("en;q=0.5, ar;q=0.6", .arabic),
        ("ar;q=0.6, en;q=0.6", .arabic),
        ("en;q=0.6, ar;q=0.6", .english),
        ("fr-FR, de;q=0.9", .english),
        ("*", .english),
        ("arz", .english),
        ("ar ; q=0.7 , en ; q=0.3", .arabic),
        ("en;q=0, ar;q=0.1", .arabic),
        ("ar;q=0.000", .english),
        ("ar;q=abc, en;q=0.2", .english),
        ("ar;q=2, en;q=0.2", .english),
        ("ar;level=1;q=0.9, en;q=0.8", .arabic),
        ("", .english),
        (",,,;;;==", .english),
        ("\u{1F600}", .english),
        ("en;q=0.1,ar-EG;q=0.2,fr", .arabic),
    ])
    func header(_ header: String, _ expected: Language) {
        #expect(Language(acceptLanguage: header) == expected, "\(header)")
    }

    @Test("nil means English")
    func missingHeader() {
        #expect(Language(acceptLanguage: nil) == .english)
    }

    @Test("raw values are the ISO 639-1 codes")
    func rawValues() {
        #expect(Language.english.rawValue == "en")
        #expect(Language.arabic.rawValue == "ar")
        #expect(Language.allCases.count == 2)
    }
}

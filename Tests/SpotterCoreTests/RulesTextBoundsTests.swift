import Testing
import SpotterProtocol
@testable import SpotterCore

@Suite("Rules: text bounds in characters and bytes")
struct RulesTextBoundsTests {
    @Test func oneClusterOfManyMarksPassesTheCharacterLimitButNotTheBytes() {
        let zalgo = "a" + String(repeating: "\u{0301}", count: 20_000)
        #expect(zalgo.count == 1)
        #expect(!TextBounds.fits(zalgo, maxCharacters: 1000))
        #expect(throws: APIError(.messageTooLong, field: "text")) { try MessageRules.text(zalgo) }
        #expect(TextBounds.fits(String(repeating: "بَّ", count: 1000), maxCharacters: 1000))
    }

    @Test func previewsStayWithinCharactersAndBytes() {
        let long = String(repeating: "👨‍👩‍👧‍👦", count: 200)  // 25 bytes each
        let preview = MessageRules.preview(text: long, meal: nil)
        #expect(preview.utf8.count <= MessageRules.maxPreviewBytes)
        #expect(preview.hasSuffix("…"))
        let plain = MessageRules.preview(text: String(repeating: "a", count: 150), meal: nil)
        #expect(plain.count == 100 && plain.hasSuffix("…"))
        #expect(MessageRules.preview(text: "short\nline", meal: nil) == "short line")
    }

    @Test func aClusterLargerThanTheBudgetIsCutBetweenScalars() {
        let zalgo = "a" + String(repeating: "\u{0301}", count: 1000)
        let cut = TextBounds.prefix(zalgo, maxCharacters: 100, maxBytes: 400)
        #expect(cut.utf8.count <= 400)
        #expect(cut.utf8.count > 300)
        #expect(cut.utf8.starts(with: "a\u{0301}".utf8))
    }
}

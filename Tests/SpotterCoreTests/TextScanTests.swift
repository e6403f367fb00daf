import SeededRandom
import Testing
@testable import SpotterCore

/// `TextScan`'s one pass over UTF-8 against the walk over characters it saves on every send (the blank-text
/// check, the character limit) and every checkpoint (the list's preview): the same answers over random texts.
@Suite("TextScan: the byte scans equal the character walks")
struct TextScanTests {
    /// Pieces that test the rules the scans rely on: every ASCII whitespace and control character, CR LF split
    /// and whole, marks that join the character before them (after a space, after a letter), a prepended mark
    /// before a letter, non-ASCII whitespace and newlines, emoji that join, Arabic with its marks.
    static let pieces = [
        " ", "\t", "\n", "\u{b}", "\u{c}", "\r", "\r\n", "\u{0}", "\u{1c}", "\u{1f}", "\u{7f}", "a", "Z", "0", ".", "\"",
        "\\", "\u{301}", " \u{301}", "e\u{301}", "\u{600}", "\u{600}a", "\u{85}", "\u{a0}", "\u{2028}", "\u{2029}",
        "\u{3000}", "\u{200d}", "\u{fe0f}", "1\u{fe0f}\u{20e3}", "👩🏽‍💻", "🇸🇦", "مَرْحَبًا", "\u{feff}", "…",
    ]

    static func slowPreview(_ text: String) -> String {
        TextBounds.prefix(String(text.map { $0.isNewline ? " " : $0 }), maxCharacters: MessageRules.maxPreviewCharacters,
                          maxBytes: MessageRules.maxPreviewBytes)
    }

    static func randomText(_ generator: inout SeededGenerator, ascii: Bool, length: Int) -> String {
        var text = ""
        for _ in 0..<length {
            switch Int.random(in: 0..<8, using: &generator) {
            case 0..<5 where ascii: text.unicodeScalars.append(UnicodeScalar(UInt8.random(in: 0...0x7F, using: &generator)))
            case 0: text.unicodeScalars.append(UnicodeScalar(UInt32.random(in: 0...0x10FFFF, using: &generator)) ?? " ")
            case 1..<4: text += ["a", " ", "\r\n", "\n", "\r", "\t"].randomElement(using: &generator)!
            default: text += ascii ? "x" : pieces.randomElement(using: &generator)!
            }
        }
        return text
    }

    @Test func randomTextsGetTheCharacterWalksAnswers() {
        var generator = SeededGenerator(seed: 0x7E47)
        // Lengths about the preview's 100 characters (where CR LF counts once), short ones, and long ones.
        let lengths = [0, 1, 2, 3, 50, 98, 99, 100, 101, 102, 103, 150, 400, 1_200]
        var asciiPreviews = 0
        for round in 0..<3_000 {
            let length = lengths[round % lengths.count] + (round % 3 == 0 ? Int.random(in: -2...2, using: &generator) : 0)
            let text = Self.randomText(&generator, ascii: round % 4 != 3, length: max(0, length))
            let detail = "round \(round): \(Array(text.unicodeScalars.map(\.value)))"
            #expect(TextScan.hasNonWhitespace(text) == text.contains { !$0.isWhitespace }, "\(detail)")
            if let fast = TextScan.asciiPreview(text) {
                asciiPreviews += 1
                #expect(fast == Self.slowPreview(text), "\(detail)")
            } else {
                #expect(text.utf8.contains { $0 >= 0x80 }, "only a non-ASCII text takes the slow path: \(detail)")
            }
            #expect(MessageRules.preview(text: text, meal: nil) == Self.slowPreview(text), "\(detail)")
            for (characters, bytes) in [(1, 8), (100, 400), (1_000, 8_192), (3, 3), (0, 0), (120, 100)] {
                #expect(TextBounds.fits(text, maxCharacters: characters, maxBytes: bytes)
                            == (text.utf8.count <= bytes && text.count <= characters), "\(characters)/\(bytes) \(detail)")
            }
        }
        #expect(asciiPreviews > 1_000, "the fast path was taken")
    }

    /// The edges by hand: CR LF across the 100th character, blank texts of every ASCII whitespace, marks.
    @Test func edges() {
        let hundred = String(repeating: "a", count: 99)
        #expect(TextScan.asciiPreview(hundred + "\r\n") == hundred + " ")  // 100 characters: whole
        #expect(TextScan.asciiPreview(hundred + "\r\nb") == hundred + "…")  // 101: cut
        #expect(TextScan.asciiPreview(hundred + "\n\r") == hundred + "…")  // LF CR is two characters
        #expect(TextScan.asciiPreview("") == "" && TextScan.asciiPreview("é") == nil)
        #expect(TextScan.asciiPreview("a\u{301}") == nil)
        for blank in ["", " ", "\t\n\u{b}\u{c}\r\n ", "\u{a0}\u{3000}\u{2028}", " \u{301}", "\u{85}"] {
            #expect(!TextScan.hasNonWhitespace(blank) && !blank.contains { !$0.isWhitespace }, "\(Array(blank.unicodeScalars))")
        }
        for visible in ["\u{0}", "\u{1c}", "\u{7f}", "\u{600}a", "\u{301}", "a", "\u{a0}x"] {
            #expect(TextScan.hasNonWhitespace(visible) && visible.contains { !$0.isWhitespace }, "\(Array(visible.unicodeScalars))")
        }
    }

    /// The sliced drop of idle windows: `atMost` per call, a pass over the windows warm when it started, the
    /// same windows dropped in the end as the whole walk drops at once.
    @Test func idleWindowsDropASliceAtATime() {
        let state = ChatState()
        for no in Int64(1)...5 {
            state.add(ChatThread(ThreadRow(id: "t\(no)", no: no, coachID: "c", clientID: "u\(no)", createdAt: 0, active: true)))
            state.installWindow(threadID: "t\(no)", [], nowMilliseconds: no == 5 ? 9_000 : 1_000)
        }
        #expect(state.warmThreads == 5)
        // Idle: the four used at 1,000 (not t5, used at 9,000), looked at two per call.
        var dropped: [Int] = []
        for _ in 0..<3 { dropped.append(state.dropIdleWindows(nowMilliseconds: 10_000, idleMilliseconds: 5_000, atMost: 2)) }
        #expect(dropped.reduce(0, +) == 4 && dropped.allSatisfy { $0 <= 2 }, "\(dropped)")
        #expect(state.warmThreads == 1 && state.thread(no: 5)?.recent != nil)
        // Nothing idle: no window goes, however many calls.
        for _ in 0..<4 { #expect(state.dropIdleWindows(nowMilliseconds: 10_000, idleMilliseconds: 5_000, atMost: 1) == 0) }
        #expect(state.dropIdleWindows(nowMilliseconds: 20_000, idleMilliseconds: 5_000, atMost: 0) == 1, "at least one per call")
        #expect(state.warmThreads == 0)
    }
}

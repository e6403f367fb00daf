import Testing
import SpotterProtocol
@testable import SpotterCore

@Suite("AccountRules: Saudi mobile numbers")
struct RulesPhoneTests {
    @Test("every accepted spelling becomes +9665XXXXXXXX", arguments: [
        "+966 55 123 4567", "+966551234567", "00966551234567", "966551234567", "0551234567", "551234567",
        "+966-55-123-4567", "(+966) 55 123 4567", "055 123 4567", "055-123-4567", "(055) 123-4567",
        " +966 5 5 1 2 3 4 5 6 7 ", "٠٥٥١٢٣٤٥٦٧", "+٩٦٦٥٥١٢٣٤٥٦٧", "۰۵۵۱۲۳۴۵۶۷", "٠٥٥ 123 ٤٥٦٧",
        "\u{00A0}0551234567\u{2009}", "0551234567\n",
    ])
    func accepted(_ raw: String) throws {
        #expect(try AccountRules.normalizeSaudiMobile(raw) == "+966551234567", "\(raw)")
    }

    @Test("every 5X prefix is accepted", arguments: 0...9)
    func prefixes(_ second: Int) throws {
        #expect(try AccountRules.normalizeSaudiMobile("05\(second)1234567") == "+9665\(second)1234567")
    }

    @Test("non-mobile, foreign, short, long or lettered numbers are refused", arguments: [
        "", "   ", "+", "011 456 7890", "0114567890", "+966 11 456 7890", "966114567890",
        "05512345", "055123456", "05512345678", "+96655123456", "+9665512345678", "+966 5512 345",
        "+971 50 123 4567", "00971501234567", "971501234567", "+1 555 123 4567",
        "055123456a", "O551234567", "055l234567", "+966 55 123 4567 ext 1", "055.123.4567",
        "++966551234567", "966+551234567", "0551234567+", "+0551234567", "+551234567",
        "0966551234567", "+966 0551234567", "4551234567", "451234567",
    ])
    func refused(_ raw: String) {
        #expect(thrownAPIError { () throws(APIError) in try AccountRules.normalizeSaudiMobile(raw) }
                == APIError(.invalidPhone, field: "phone"), "\(raw)")
    }

    @Test("the result is plain ASCII E.164")
    func asciiOutput() throws {
        let normalized = try AccountRules.normalizeSaudiMobile("٠٥٩٩٨٨٧٧٦٦")
        #expect(normalized == "+966599887766")
        #expect(normalized.utf8.allSatisfy { $0 < 0x80 })
        #expect(normalized.utf8.count == 13)
    }
}

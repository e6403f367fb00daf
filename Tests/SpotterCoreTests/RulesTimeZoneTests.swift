import Foundation
import Testing
import SpotterProtocol
@testable import SpotterCore

@Suite("TimeZoneRules: region/city names of the IANA database, or UTC")
struct RulesTimeZoneTests {
    @Test("region/city names and UTC are saved as given", arguments: [
        "UTC", "Asia/Riyadh", "America/New_York", "Europe/London", "America/Argentina/Buenos_Aires",
        "America/Port-au-Prince", "Pacific/Auckland", "Antarctica/McMurdo", "Indian/Maldives", "Atlantic/Azores",
    ])
    func allowed(_ name: String) throws {
        #expect(try TimeZoneRules.check(name) == name)
        #expect(TimeZoneRules.shownName(name) == name)
        #expect(TimeZoneRules.zone(name) == TimeZone(identifier: name)!)
    }

    @Test func etcUTCIsSavedAsUTC() throws {
        #expect(try TimeZoneRules.check("Etc/UTC") == "UTC")
    }

    @Test("fixed offsets, abbreviations, other trees and malformed names are refused with invalid_time_zone", arguments: [
        "Asia/Riyadh\u{0}", "\u{0}Asia/Riyadh", "Asia/Riyadh\n", "Asia/Riyadh ", " Asia/Riyadh", "Asia/ Riyadh",
        "Etc/GMT+12", "Etc/GMT-14", "Etc/GMT", "Etc/Universal", "SystemV/AST4", "SystemV/EST5EDT",
        "posix/Asia/Riyadh", "right/Asia/Riyadh", "US/Eastern", "Canada/Pacific", "Brazil/East",
        "EST", "GMT+3", "GMT", "EST5EDT", "CET", "Zulu", "+03:00", "", "/", "Asia/", "/Asia/Riyadh", "Asia//Riyadh",
        "Asia/../Asia/Riyadh", "Asia/./Riyadh", "Asia/Riyadh/", "../etc/passwd", "asia/riyadh", "ASIA/RIYADH",
        "Mars/Olympus", "Asia/Nowhere", "Asia/Riyadh\u{301}", "Asia/Riyāḍ", "utc", "UTC ", "Etc/UTC\u{0}",
        String(repeating: "A/", count: 40),
    ])
    func refused(_ name: String) {
        let error = thrownAPIError { () throws(APIError) in try TimeZoneRules.check(name) }
        #expect(error?.code == .invalidTimeZone && error?.field == "time_zone", "\(name.debugDescription)")
    }

    @Test("a stored name these rules refuse is read and shown as UTC", arguments: [
        "Asia/Riyadh\u{0}", "Etc/GMT+12", "SystemV/AST4", "EST", "", "Mars/Olympus",
    ])
    func storedRefusedNamesAreUTC(_ name: String) {
        #expect(TimeZoneRules.zone(name) == TimeZone(identifier: "UTC")!)
        #expect(TimeZoneRules.shownName(name) == "UTC")
    }
}

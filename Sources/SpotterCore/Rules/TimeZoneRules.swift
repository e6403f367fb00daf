import Foundation
import SpotterProtocol

/// Which time zone names a user may choose: "UTC", or a region/city name of the IANA database that this
/// system's tz data knows ("Asia/Riyadh", "America/Argentina/Buenos_Aires"). Everything else is refused:
/// abbreviations ("EST", "GMT+3") and fixed offsets ("Etc/GMT+12", "SystemV/AST4") do not follow a place's
/// daylight-saving rules, and the tz data's other trees ("posix/…", "right/…", "US/…") are aliases or leap-second
/// variants, not names a person picks. "Etc/UTC" is accepted and saved as "UTC", the one spelling of UTC.
/// Reads the system's tz data, nothing else.
public enum TimeZoneRules {
    public static let maxLength = 64

    /// The first part of every name a user may choose: the continents and oceans of the IANA database.
    public static let regions: Set<Substring> = [
        "Africa", "America", "Antarctica", "Arctic", "Asia", "Atlantic", "Australia", "Europe", "Indian", "Pacific",
    ]

    /// The name to save for `raw`, or `invalid_time_zone` on `field`.
    public static func check(_ raw: String, field: String = "time_zone") throws(APIError) -> String {
        guard let (name, _) = allowed(raw) else { throw APIError(.invalidTimeZone, field: field) }
        return name
    }

    /// The zone for a stored name. A name these rules refuse (saved before they were this strict) is read as
    /// UTC, as is anything this system's tz data no longer knows.
    public static func zone(_ name: String) -> TimeZone {
        allowed(name)?.zone ?? utc
    }

    /// The name a stored zone is shown and used as: itself when allowed, else "UTC" (see `zone`).
    public static func shownName(_ stored: String) -> String {
        allowed(stored)?.name ?? "UTC"
    }

    private static let utc = TimeZone(identifier: "UTC")!

    /// "UTC", or `Region/Place[/Place]` whose parts are ASCII letters, digits, `_`, `-` and `+` (each part
    /// starting with a letter, so neither `..` nor an empty part), whose region is one of `regions`, and which
    /// the system's tz data knows under exactly this spelling.
    static func allowed(_ raw: String) -> (name: String, zone: TimeZone)? {
        if raw == "UTC" || raw == "Etc/UTC" { return ("UTC", utc) }
        guard raw.utf8.count <= maxLength else { return nil }
        let parts = raw.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts.count <= 3, regions.contains(parts[0]),
              parts.allSatisfy(isNamePart) else { return nil }
        guard let zone = TimeZone(identifier: raw), zone.identifier == raw else { return nil }
        return (raw, zone)
    }

    private static func isNamePart(_ part: Substring) -> Bool {
        guard let first = part.utf8.first, isLetter(first) else { return false }
        return part.utf8.allSatisfy { isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
            || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "+") }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}

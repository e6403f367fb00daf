import Foundation
import SpotterProtocol

/// Which time zone names a user may choose: "UTC", or a region/city name of the IANA database that this
/// system's tz data knows ("Asia/Riyadh", "America/New_York"). Abbreviations ("EST") and raw offsets are
/// refused: they do not follow daylight-saving rules. Reads the system's tz data, nothing else.
public enum TimeZoneRules {
    public static let maxLength = 64

    /// The name as given, or `invalid_time_zone` on `field`.
    public static func check(_ raw: String, field: String = "time_zone") throws(APIError) -> String {
        guard raw == "UTC" || (raw.utf8.count <= maxLength && raw.contains("/") && TimeZone(identifier: raw) != nil)
        else { throw APIError(.invalidTimeZone, field: field) }
        return raw
    }

    /// The zone for a stored name (UTC for anything unknown: the name was checked when saved).
    public static func zone(_ name: String) -> TimeZone {
        TimeZone(identifier: name) ?? TimeZone(identifier: "UTC")!
    }
}
